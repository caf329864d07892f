import type { FilterNode } from '../../../core/rows/filter-parse.ts';

/**
 * What one process remembers about row listings, so repeated and deep requests stay cheap:
 * a filter's total, and "seek anchors" — the sort keys of the row just before a given offset, from
 * which a later request for that offset reads forward through the index instead of skipping
 * OFFSET entries.
 *
 * Everything remembered is tied to the project's change counter (`version`, bumped by every write
 * in any process). A write made by this process is accounted for here instead of discarding
 * what it cannot have changed: it says which columns it touched and, for totals it may have
 * moved, by how much. An entry is then valid while `version === entry.version + entry.adjusted`:
 * any write this process did not account for (another process, a failed adjustment) leaves the
 * counter ahead, and the entry is counted afresh.
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
  /** Matching rows (filtered shapes only; unfiltered totals come from the row counters). */
  total?: number;
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
function affects(e: ListingShape, effect: WriteEffect): { filter: boolean; order: boolean } {
  if (effect.kind !== 'cells') return { filter: true, order: true };
  const filter = e.statusCols.includes(effect.colNo) || (effect.valuesToo && e.valueCols.includes(effect.colNo));
  return { filter, order: filter || (effect.valuesToo && e.sortCols.includes(effect.colNo)) };
}

/** An own write in progress: the entries whose totals it measures (delta per entry key). */
export interface WriteTicket {
  projectPk: number;
  effect: WriteEffect;
  startTick: number;
  /** Filtered totals this write keeps exact by counting its rows before and after. */
  measured: Entry[];
  deltas: Map<string, number>;
}

const MAX_ENTRIES = 2_000;
const MAX_ANCHORS = 64;
/** A write counts its rows against at most this many remembered filters of the project. */
const MAX_MEASURED = 4;

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

  /** Records a total counted at `version` (read before counting): a fresh entry, anchors dropped. */
  rememberTotal(shape: ListingShape, version: number, total: number): void {
    this.put({ ...shape, version, adjusted: 0, readyTick: ++this.clock, total, anchors: new Map() });
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

  /**
   * Starts an own write to a project. Remembered totals it can change, of filters on one column,
   * are measured: the write counts its rows against them before and after. Writes come through
   * RowWrites.run (row-write.ts), which calls this, measure and endWrite in order.
   */
  beginWrite(projectPk: number, effect: WriteEffect): WriteTicket {
    const measured: Entry[] = [];
    for (const e of this.byProject.get(projectPk)?.values() ?? []) {
      if (e.total === undefined || !e.filter || e.filterCols.length !== 1) continue;
      if (affects(e, effect).filter && measured.length < MAX_MEASURED) measured.push(e);
    }
    return { projectPk, effect, startTick: ++this.clock, measured, deltas: new Map() };
  }

  /** Adds `delta` matching rows to a measured entry's pending change. */
  static measure(t: WriteTicket, e: Entry, delta: number): void {
    t.deltas.set(e.key, (t.deltas.get(e.key) ?? 0) + delta);
  }

  /**
   * After the write committed: every entry of the project either follows it (adjusted, still
   * valid) or is forgotten. Never call this for a write that did not commit.
   */
  endWrite(t: WriteTicket): void {
    for (const [key, e] of this.byProject.get(t.projectPk) ?? []) {
      // Known only after this write began: it may or may not include the write's rows.
      if (e.readyTick > t.startTick) {
        this.forget(e);
        continue;
      }
      const touched = affects(e, t.effect);
      if (e.total !== undefined && touched.filter) {
        const delta = t.deltas.get(key);
        if (delta === undefined) {
          this.forget(e);
          continue;
        }
        e.total += delta;
      }
      if (touched.order) this.dropAnchors(e, t.effect);
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
