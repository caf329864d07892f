import { type Kysely, sql } from 'kysely';
import { log } from '../../../core/log.ts';
import type { Database } from '../database.ts';
import { reusableQuery } from '../compiled-queries.ts';
import type { Tables } from '../tables.ts';
import type { WriteEffect } from './listing-memory.ts';

/**
 * The log of row writes (`row_changes`, migration 014): each write records what it did, in its
 * transaction, beside its bump of the project's change counter `v`. A process that remembers
 * something about a listing at (`v`, last change id) reads the changes since and applies them
 * — whichever process made them — instead of forgetting.
 *
 * Ids are numbered when a write inserts its record, not when it commits, so a slow write may
 * commit a lower id after a higher one was read. Counting catches it: the changes read between
 * two states must number exactly the difference of their `v`; when they do not, the reader
 * forgets (and reads the slow way once).
 */

/** One write, as a reader applies it. */
export type Change = WriteEffect;

/** Changes a reader catches up with at most; further behind, it forgets. */
export const MAX_CATCH_UP = 256;
/** Records are kept this long; a remembered listing older than that is read the slow way once. */
const KEEP_MS = 10 * 60_000;
const PRUNE_EVERY_MS = 60_000;

const KIND = { insert: 1, delete: 2, values: 3, statuses: 4 } as const;

export class RowChanges {
  private readonly sinceQuery;
  /** (time, last id this process recorded), oldest first: what may be pruned once KEEP_MS old. */
  private readonly marks: { at: number; id: number }[] = [];
  private lastId = 0;
  private pruning = false;

  constructor(private readonly database: Database) {
    this.sinceQuery = reusableQuery(['pk', 'after', 'upTo', 'limit'], (v) =>
      database.db
        .selectFrom('row_changes')
        .select(['id', 'kind', 'first_seq', 'row_count', 'col_no'])
        .where('project_pk', '=', v('pk'))
        .where('id', '>', v('after'))
        .where('id', '<=', v('upTo'))
        .orderBy('id')
        .limit(v('limit')),
    );
  }

  /** Records a write, in its transaction. */
  async record(trx: Kysely<Tables>, projectPk: number, effect: WriteEffect): Promise<void> {
    const values =
      effect.kind === 'insert'
        ? { kind: KIND.insert, first_seq: effect.firstSeq, row_count: effect.rows, col_no: null }
        : effect.kind === 'delete'
          ? { kind: KIND.delete, first_seq: null, row_count: null, col_no: null }
          : { kind: effect.valuesToo ? KIND.values : KIND.statuses, first_seq: null, row_count: null, col_no: effect.colNo };
    const r = await trx
      .insertInto('row_changes')
      .values({ project_pk: projectPk, ...values })
      .executeTakeFirst();
    this.lastId = Math.max(this.lastId, Number(r.insertId ?? 0));
  }

  /** The changes of a project with ids in (`after`, `upTo`], oldest first; undefined when more than MAX_CATCH_UP. */
  async since(projectPk: number, after: number, upTo: number): Promise<Change[] | undefined> {
    if (upTo <= after) return [];
    const rows = await this.sinceQuery.run(this.database.db, { pk: projectPk, after, upTo, limit: MAX_CATCH_UP + 1 });
    if (rows.length > MAX_CATCH_UP) return undefined;
    return rows.map((r): Change => {
      const kind = Number(r.kind);
      if (kind === KIND.insert) return { kind: 'insert', firstSeq: Number(r.first_seq), rows: Number(r.row_count) };
      if (kind === KIND.delete) return { kind: 'delete' };
      return { kind: 'cells', colNo: Number(r.col_no), valuesToo: kind === KIND.values };
    });
  }

  /**
   * After a committed write: at most once a minute, deletes the records this process knows to be
   * older than KEEP_MS (ids are increasing, so everything below the id it recorded back then).
   */
  pruneNow(now = Date.now()): void {
    const last = this.marks[this.marks.length - 1];
    if (!last || now - last.at >= PRUNE_EVERY_MS) this.marks.push({ at: now, id: this.lastId });
    let upTo = 0;
    while (this.marks.length > 1 && now - (this.marks[0]?.at ?? now) >= KEEP_MS) upTo = this.marks.shift()?.id ?? upTo;
    if (upTo === 0 || this.pruning) return;
    this.pruning = true;
    sql`DELETE FROM row_changes WHERE id <= ${upTo}`
      .execute(this.database.db)
      .catch((e) => log.warn('pruning row_changes failed', { error: (e as Error).message }))
      .finally(() => {
        this.pruning = false;
      });
  }
}
