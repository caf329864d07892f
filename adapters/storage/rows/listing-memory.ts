import type { FilterNode } from '../../../core/rows/filter-parse.ts';

/**
 * What one process remembers about row listings, so deep requests stay cheap: "seek anchors" — the
 * sort keys of the row just before a given offset, from which a later request for that offset
 * reads forward through the index instead of skipping OFFSET entries. (Filtered totals are shared
 * by every process: shared-totals.ts.)
 *
 * Everything remembered is tied to the project's change counter (`version`, bumped by every write
 * in any process). A write made by this process is accounted for here instead of discarding
 * what it cannot have changed: it says which columns it touched. An entry is then valid while
 * `version === entry.version + entry.adjusted`: any write this process did not account for
 * (another process) leaves the counter ahead, and the entry is dropped.
 */

/** A row's place in a sorted listing: per sort rule its (missing/empty flag, key), then its seq. */
export interface SeekKey {
  keys: [number, number | string | null][];
  seq: number;
}

export interface ListingShape {
  /** Identifies project + filter + sort (compiled SQL and parameters). */
  key: string;
  projectPk: number;
  filter: FilterNode | null;
  /** Every column the filter reads; of those, the ones whose value / whose status it reads. */
  filterCols: number[];
  valueCols: number[];
  statusCols: number[];
  sortCols: number[];
}

export interface Entry extends ListingShape {
  version: number;
  adjusted: number;
  /** Clock tick at which the entry's content was known; writes that began earlier may not adjust it. */
  readyTick: number;
  /** Seek anchors by offset: the key of the row at position offset - 1. */
  anchors: Map<number, SeekKey>;
}

/** What a committed write did, as far as remembered listings care. */
export type WriteEffect =
  | { kind: 'insert'; firstSeq: number }
  | { kind: 'delete' }
  /** Cells of one column: values (and statuses) written, or only statuses moved. */
  | { kind: 'cells'; colNo: number; valuesToo: boolean };

/** Whether a write can change which rows a shape's filter matches, and the order of its rows. */
export function affects(
  e: Pick<ListingShape, 'statusCols' | 'valueCols' | 'sortCols'>,
  effect: WriteEffect,
): { filter: boolean; order: boolean } {
  if (effect.kind !== 'cells') return { filter: true, order: true };
  const filter = e.statusCols.includes(effect.colNo) || (effect.valuesToo && e.valueCols.includes(effect.colNo));
  return { filter, order: filter || (effect.valuesToo && e.sortCols.includes(effect.colNo)) };
}

/** An own write in progress. */
export interface WriteTicket {
  projectPk: number;
  effect: WriteEffect;
  startTick: number;
}

const MAX_ENTRIES = 2_000;
const MAX_ANCHORS = 64;

export class ListingMemory {
  private clock = 0;
  /** Every entry; map order is recency (a used entry moves to the end, the oldest is forgotten first). */
  private readonly entries = new Map<string, Entry>();
  /** The same entries by project, for writes. */
  private readonly byProject = new Map<number, Map<string, Entry>>();

  /** The entry for a shape if it is still valid at `version` (the project's counter, read before). */
  valid(key: string, version: number): Entry | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.version + e.adjusted !== version) {
      this.forget(e);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return e;
  }

  /**
   * Records anchors read at `version` (read before the page query). Kept only while the entry is
   * still valid at that version, so anchors read before a write never outlive it.
   */
  rememberAnchors(shape: ListingShape, version: number, anchors: [number, SeekKey][]): void {
    if (anchors.length === 0) return;
    let e = this.entries.get(shape.key);
    if (e && e.version + e.adjusted !== version) return;
    if (!e) {
      e = { ...shape, version, adjusted: 0, readyTick: ++this.clock, anchors: new Map() };
      this.put(e);
    }
    for (const [offset, at] of anchors) {
      if (offset <= 0) continue;
      e.anchors.delete(offset);
      e.anchors.set(offset, at);
      if (e.anchors.size > MAX_ANCHORS) e.anchors.delete(e.anchors.keys().next().value as number);
    }
  }

  /** The remembered anchor closest below (or at) `offset`. */
  static nearest(e: Entry | undefined, offset: number): { offset: number; at: SeekKey } | undefined {
    let best: { offset: number; at: SeekKey } | undefined;
    for (const [o, at] of e?.anchors ?? []) if (o <= offset && (!best || o > best.offset)) best = { offset: o, at };
    return best;
  }

  /** Starts an own write to a project. Writes come through RowWrites.run (row-write.ts), which calls endWrite once committed. */
  beginWrite(projectPk: number, effect: WriteEffect): WriteTicket {
    return { projectPk, effect, startTick: ++this.clock };
  }

  /**
   * After the write committed: every entry of the project either follows it (adjusted, still
   * valid) or is forgotten. Never call this for a write that did not commit.
   */
  endWrite(t: WriteTicket): void {
    for (const e of this.byProject.get(t.projectPk)?.values() ?? []) {
      // Known only after this write began: it may or may not include the write's rows.
      if (e.readyTick > t.startTick) {
        this.forget(e);
        continue;
      }
      if (affects(e, t.effect).order) this.dropAnchors(e, t.effect);
      e.adjusted += 1;
    }
  }

  /** Insertion-ordered listings keep the anchors before the new rows (appended at the end). */
  private dropAnchors(e: Entry, effect: WriteEffect): void {
    if (effect.kind === 'insert' && e.sortCols.length === 0) {
      for (const [o, at] of e.anchors) if (at.seq >= effect.firstSeq) e.anchors.delete(o);
      return;
    }
    e.anchors.clear();
  }

  private put(e: Entry): void {
    const old = this.entries.get(e.key);
    if (old) this.forget(old);
    this.entries.set(e.key, e);
    let mine = this.byProject.get(e.projectPk);
    if (!mine) {
      mine = new Map();
      this.byProject.set(e.projectPk, mine);
    }
    mine.set(e.key, e);
    if (this.entries.size > MAX_ENTRIES) this.forget(this.entries.values().next().value as Entry);
  }

  private forget(e: Entry): void {
    this.entries.delete(e.key);
    const mine = this.byProject.get(e.projectPk);
    mine?.delete(e.key);
    if (mine?.size === 0) this.byProject.delete(e.projectPk);
  }
}
