import type { FilterNode } from '../../../core/rows/filter-parse.ts';

/**
 * What one process remembers about row listings, so deep requests stay cheap: "seek anchors" — the
 * sort keys of the row just before a given offset, from which a later request for that offset
 * reads forward through the index instead of skipping OFFSET entries. (Filtered totals are shared
 * by every process: shared-totals.ts.)
 *
 * An entry is known at a state of its project: the change counter `v` and the last id of the
 * change log (row-changes.ts), read together. When the project has moved on, by this process's
 * writes or another's, the reader fetches the changes since and the entry follows them: a change
 * keeps the anchors it cannot have moved (a result in a column the listing neither filters nor
 * sorts on), notes new rows as pending (an anchor moves down by the pending rows that match and
 * sort before it, counted when it is next used: RowListing) and drops the anchors of any other
 * change. When the changes read do not add up to the counter's progress, or are too many, the
 * entry is forgotten.
 */

/** A project's state as a listing reads it, in one snapshot. */
export interface ProjectState {
  /** The change counter: one per committed write. */
  version: number;
  /** The newest change log id then. */
  changeId: number;
}

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

/** An anchor: the key of the row at position offset - 1, once the first `seen` pending rows are counted in. */
export interface Anchor {
  key: SeekKey;
  seen: number;
}

export interface Entry extends ListingShape {
  /** The project's state the anchors are true at, with the pending rows. */
  at: ProjectState;
  /** Seqs of the rows added since the entry began, oldest first. */
  pending: number[];
  /** Seek anchors by offset. */
  anchors: Map<number, Anchor>;
}

/** What a committed write did, as far as remembered listings care. */
export type WriteEffect =
  | { kind: 'insert'; firstSeq: number; rows: number }
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

const MAX_ENTRIES = 2_000;
const MAX_ANCHORS = 64;
/** New rows an entry notes at most; past that its anchors are dropped (the next deep page starts afresh). */
const MAX_PENDING = 256;

export class ListingMemory {
  /** Every entry; map order is recency (a used entry moves to the end, the oldest is forgotten first). */
  private readonly entries = new Map<string, Entry>();
  /** Catch-ups that kept the entry, those that forgot it, anchors moved by new rows (for tests and diagnosis). */
  readonly stats = { caughtUp: 0, forgotten: 0, settled: 0 };

  /**
   * The entry for a shape: `current` when it is known at `now`, `behind` when the project moved
   * on since (then call `catchUp` with the changes in between), nothing when there is none.
   */
  lookup(key: string, now: ProjectState): { entry: Entry; current: boolean } | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e);
    return { entry: e, current: e.at.version === now.version };
  }

  /**
   * Brings an entry from its state to `now` through `changes` (the log records with ids in
   * (entry.at.changeId, now.changeId], oldest first; undefined: too many). Every write between
   * the two states must be among them, or the entry is forgotten.
   */
  catchUp(e: Entry, changes: WriteEffect[] | undefined, now: ProjectState): Entry | undefined {
    if (!changes || now.version < e.at.version || e.at.version + changes.length !== now.version) {
      this.entries.delete(e.key);
      this.stats.forgotten++;
      return undefined;
    }
    this.stats.caughtUp++;
    for (const change of changes) {
      if (change.kind === 'insert' && e.pending.length + change.rows <= MAX_PENDING) {
        for (let i = 0; i < change.rows; i++) e.pending.push(change.firstSeq + i);
      } else if (affects(e, change).order) {
        e.anchors.clear();
        e.pending = [];
      }
    }
    e.at = now;
    return e;
  }

  /** Records anchors read at the project's state `at` (unchanged from before the read to after it). */
  rememberAnchors(shape: ListingShape, at: ProjectState, anchors: [number, SeekKey][]): void {
    if (anchors.length === 0) return;
    let e = this.entries.get(shape.key);
    if (!e || e.at.version !== at.version) {
      e = { ...shape, at, pending: [], anchors: new Map() };
      this.entries.delete(shape.key);
      this.entries.set(shape.key, e);
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    }
    for (const [offset, key] of anchors) {
      if (offset <= 0) continue;
      setAnchor(e, offset, { key, seen: e.pending.length });
    }
  }

  /**
   * The remembered anchor closest below (or at) `offset`, with the pending rows it has not
   * counted (`unseen`: settle it with how many of them sort before it).
   */
  static nearest(e: Entry | undefined, offset: number): { offset: number; at: SeekKey; unseen: number[] } | undefined {
    let best: [number, Anchor] | undefined;
    for (const [o, a] of e?.anchors ?? []) if (o <= offset && (!best || o > best[0])) best = [o, a];
    if (!e || !best) return undefined;
    return { offset: best[0], at: best[1].key, unseen: e.pending.slice(best[1].seen) };
  }

  /** An anchor's unseen pending rows are counted: `before` of them sort before it, so it moves down. */
  settle(e: Entry, offset: number, before: number): void {
    const a = e.anchors.get(offset);
    if (!a) return;
    this.stats.settled++;
    e.anchors.delete(offset);
    setAnchor(e, offset + before, { key: a.key, seen: e.pending.length });
  }
}

function setAnchor(e: Entry, offset: number, anchor: Anchor): void {
  e.anchors.delete(offset);
  e.anchors.set(offset, anchor);
  if (e.anchors.size > MAX_ANCHORS) e.anchors.delete(e.anchors.keys().next().value as number);
}
