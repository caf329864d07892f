import type { Cell, CellStatus, Column } from '../../../core/model.ts';
import { type BuilderRunState, type JobsOf, type RowInsertParts, StaleBuilderRun, UniqueKeyTaken } from '../../../core/ports/storage.ts';
import type { Kysely } from 'kysely';
import type { Tables } from '../tables.ts';
import type { Database } from '../database.ts';
import { chunks, chunksBySize, insertMany, integerList } from '../compiled-queries.ts';
import { builderStateValues } from '../project-repo.ts';
import type { CellKeyTable } from '../tables.ts';
import { cellKey, storedCell } from './cell-records.ts';
import { COALESCE_MAX_ROWS, InsertLanes } from './insert-lanes.ts';
import { changed, type RowWrites, unchanged } from './row-write.ts';
import { SeqAllocator } from './seq-allocator.ts';

/** Rows per multi-row statement; cell keys are chunked to stay under both dialects' parameter limits. */
const ROW_CHUNK = 500;
const KEY_CHUNK = 2_000;
/** Characters of values one statement carries at most (escaped, it stays well under a 16 MB packet). */
const STATEMENT_CHARS = 4 * 1024 * 1024;
const keyChars = (k: CellKeyTable) => 40 + (k.text_key?.length ?? 0) + (k.text_full?.length ?? 0);
const ROW_FIELDS = ['project_pk', 'seq', 'cells', 'created_at', 'updated_at', 'deleted_at'] as const;
const KEY_FIELDS = ['project_pk', 'col_no', 'seq', 'status', 'is_empty', 'num_missing', 'num_key', 'text_key', 'text_full'] as const;
/** What a tool result rewrites in its cell key record. */
const RESULT_FIELDS = ['status', 'is_empty', 'num_missing', 'num_key', 'text_key', 'text_full', 'cell'] as const;
const RESULT_KEY_FIELDS = ['project_pk', 'col_no', 'seq', ...RESULT_FIELDS] as const;

/** A builder page's state, written only over the checkpoint its run last wrote (when it names one). */
async function writeBuilderState(db: Kysely<Tables>, projectPk: number, state: BuilderRunState): Promise<void> {
  // The previous page first: its checkpoint is the one this write expects.
  if (state.after) await state.after;
  let q = db.updateTable('projects').set(builderStateValues(state)).where('pk', '=', projectPk);
  if (state.checkpointWas !== undefined) {
    const was = state.checkpointWas;
    // A run cancelled (or ended) meanwhile takes no more pages: the write fails as stale, rows and all.
    q = q.where('builder_status', 'in', ['queued', 'running']);
    q = was === null ? q.where('builder_checkpoint', 'is', null) : q.where('builder_checkpoint', '=', JSON.stringify(was));
  }
  const r = await q.executeTakeFirst();
  if (state.checkpointWas !== undefined && Number(r.numUpdatedRows) === 0) throw new StaleBuilderRun();
}

/** Every change to rows: inserts, deletes, tool results, status moves; each one a RowWrites.run. */
export class RowWriter {
  private readonly seqs: SeqAllocator;
  private readonly lanes = new InsertLanes();

  constructor(
    private readonly database: Database,
    private readonly writes: RowWrites,
  ) {
    this.seqs = new SeqAllocator(database);
  }

  private get inList() {
    return this.database.dialect.limits.inListSize;
  }

  /** Small inserts are written together with others into the same project (InsertLanes). */
  insert(projectPk: number, columns: Column[], rows: Record<number, Cell>[], with_: RowInsertParts = {}): Promise<number[]> {
    const { builderState, jobs, runId, keys } = with_;
    if (builderState || rows.length === 0 || rows.length > COALESCE_MAX_ROWS)
      return this.insertNow(projectPk, columns, rows, builderState, jobs, runId, keys);
    // Inserts of one run (or of none) share a lane: a batch's queued cells all name its run. A key
    // another write took fails the batch, whose calls are then written alone (InsertLanes).
    const key = `${projectPk}:${runId ?? ''}:${columns.map((c) => `${c.no}${c.type}`).join(',')}`;
    return this.lanes.insert(key, rows, jobs, keys, (batch, batchJobs, batchKeys) =>
      this.insertNow(projectPk, columns, batch, undefined, batchJobs, runId, batchKeys),
    );
  }

  private async insertNow(
    projectPk: number,
    columns: Column[],
    rows: Record<number, Cell>[],
    builderState?: BuilderRunState,
    jobs?: JobsOf<number[]>,
    runId?: string,
    keys?: (string | null)[],
  ): Promise<number[]> {
    if (rows.length === 0) {
      if (builderState) await writeBuilderState(this.database.db, projectPk, builderState);
      return [];
    }
    const first = await this.seqs.take(rows.length);
    const now = Date.now();
    const seqs = rows.map((_, i) => first + i);
    const rowValues = rows.map((cells, i) => {
      const stored: Record<number, Cell> = {};
      for (const [no, cell] of Object.entries(cells)) if (cell.v !== null || cell.e) stored[Number(no)] = storedCell(cell);
      return {
        project_pk: projectPk,
        seq: seqs[i] as number,
        cells: JSON.stringify(stored),
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
    });
    const keyValues: CellKeyTable[] = [];
    const queuedCols = new Set<number>();
    rows.forEach((cells, i) => {
      for (const c of columns) {
        const cell = cells[c.no];
        const status: CellStatus = cell?.s ?? (c.type === 'tool' ? 'pending' : 'default');
        keyValues.push({ project_pk: projectPk, col_no: c.no, seq: seqs[i] as number, ...cellKey(cell?.v ?? null, status) });
        if (runId && status === 'queued') queuedCols.add(c.no);
      }
    });
    const write = () =>
      this.writes.run(
        projectPk,
        { kind: 'insert', firstSeq: first, rows: rows.length },
        async ({ trx, change }) => {
          await change(seqs, 'add', async () => {
            for (const part of chunksBySize(rowValues, ROW_CHUNK, STATEMENT_CHARS, (r) => r.cells.length))
              await insertMany(trx, 'project_rows', ROW_FIELDS, part);
            for (const part of chunksBySize(keyValues, KEY_CHUNK, STATEMENT_CHARS, keyChars))
              await insertMany(trx, 'cell_keys', KEY_FIELDS, part);
            // Unique keys: the primary key refuses one that exists, and the whole write with it.
            const keyed = (keys ?? []).flatMap((key, i) => (key ? [{ project_pk: projectPk, key_hash: key, seq: seqs[i] as number }] : []));
            for (const part of chunks(keyed, ROW_CHUNK)) await trx.insertInto('row_keys').values(part).execute();
            // The run that queued the auto-run cells (one statement; bulk inserts without a run skip it).
            if (runId && queuedCols.size) {
              await trx
                .updateTable('cell_keys')
                .set({ run_id: runId })
                .where('project_pk', '=', projectPk)
                .where('col_no', 'in', [...queuedCols])
                .where('seq', '>=', first)
                .where('seq', '<=', first + rows.length - 1)
                .execute();
            }
          });
          // The rows and the builder's checkpoint commit together: no duplicate on resume.
          if (builderState) await writeBuilderState(trx, projectPk, builderState);
          return changed(seqs, rows.length);
        },
        jobs,
      );
    if (!keys) return write();
    try {
      return await write();
    } catch (e) {
      // Another write took one of these keys first: the caller reads the keys again.
      if (this.database.dialect.errors.isDuplicateKey(e)) throw new UniqueKeyTaken();
      throw e;
    }
  }

  async softDelete(projectPk: number, seqs: number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    const colNos = (
      await this.database.db.selectFrom('project_columns').select('col_no').where('project_pk', '=', projectPk).execute()
    ).map((c) => Number(c.col_no));
    return this.writes.run(projectPk, { kind: 'delete' }, async ({ trx, change }) => {
      let deleted = 0;
      for (const part of chunks(seqs, this.inList)) {
        const r = await trx
          .updateTable('project_rows')
          .set({ deleted_at: Date.now() })
          .where('project_pk', '=', projectPk)
          .where('seq', 'in', part)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        deleted += Number(r.numUpdatedRows);
        // A deleted row's unique key is free again.
        await trx.deleteFrom('row_keys').where('project_pk', '=', projectPk).where('seq', 'in', part).execute();
        // Keys of deleted rows go at once, so filters and counts never see them.
        if (colNos.length) {
          await change(part, 'remove', () =>
            trx
              .deleteFrom('cell_keys')
              .where('project_pk', '=', projectPk)
              .where('col_no', 'in', colNos)
              .where('seq', 'in', part)
              .execute(),
          );
        }
      }
      return deleted ? changed(deleted, -deleted) : unchanged(deleted);
    });
  }

  /**
   * Cells of one of `from` moved to `to`. Without `by`, whatever job held them lets go; with it (an
   * enrichment job's move), only cells held by no job or by `by.jobId` move, held by it after if `by.hold`.
   */
  async moveStatus(
    projectPk: number,
    colNo: number,
    from: CellStatus[],
    to: CellStatus,
    seqs?: number[],
    jobs?: JobsOf<number[]>,
    runId?: string | null,
    by?: { jobId: string; hold: boolean },
  ): Promise<number[]> {
    const held = { held_by: by?.hold ? by.jobId : null };
    return this.writes.run(
      projectPk,
      { kind: 'cells', colNo, valuesToo: false },
      async ({ trx, change }) => {
        const moved: number[] = [];
        const parts = seqs ? chunks(seqs, this.inList) : [undefined];
        for (const part of parts) {
          if (part && part.length === 0) continue;
          let q = trx
            .selectFrom('cell_keys')
            .select('seq')
            .where('project_pk', '=', projectPk)
            .where('col_no', '=', colNo)
            .where('status', 'in', from);
          if (part) q = q.where('seq', 'in', integerList(part));
          // The lock makes a concurrent claim wait, then read the holder this one wrote.
          if (by) q = q.where((eb) => eb.or([eb('held_by', 'is', null), eb('held_by', '=', by.jobId)]));
          const found = (await this.database.dialect.locking.lockedRead(q).execute()).map((r) => Number(r.seq));
          await change(found, 'update', async () => {
            for (const ids of chunks(found, this.inList)) {
              await trx
                .updateTable('cell_keys')
                .set(runId === undefined ? { status: to, ...held } : { status: to, run_id: runId, ...held })
                .where('project_pk', '=', projectPk)
                .where('col_no', '=', colNo)
                .where('seq', 'in', integerList(ids))
                .execute();
            }
          });
          moved.push(...found);
        }
        // Status filters may match differently now: listings remembered elsewhere are stale.
        return moved.length ? changed(moved) : unchanged(moved);
      },
      jobs,
    );
  }

  async writeCells(projectPk: number, colNo: number, cells: { seq: number; cell: Cell }[], jobs?: JobsOf<void>): Promise<void> {
    if (cells.length === 0 && !jobs) return;
    const { dialect } = this.database;
    const resultsClash = dialect.upsertClause(['project_pk', 'col_no', 'seq'], RESULT_FIELDS);
    await this.writes.run(
      projectPk,
      { kind: 'cells', colNo, valuesToo: true },
      async ({ trx, change }) => {
        for (const part of chunks(cells, this.inList)) {
          // Rows deleted meanwhile have no key any more: lock the keys that exist, write only those.
          const read = trx
            .selectFrom('cell_keys')
            .select('seq')
            .where('project_pk', '=', projectPk)
            .where('col_no', '=', colNo)
            .where('seq', 'in', integerList(part.map((c) => c.seq)));
          const live = new Set((await dialect.locking.lockedRead(read).execute()).map((r) => Number(r.seq)));
          const keyValues: CellKeyTable[] = part
            .filter(({ seq }) => live.has(seq))
            .map(({ seq, cell }) => ({
              project_pk: projectPk,
              col_no: colNo,
              seq,
              ...cellKey(cell.v, cell.s ?? 'completed'),
              cell: JSON.stringify(storedCell(cell)),
            }));
          if (keyValues.length === 0) continue;
          await change(
            keyValues.map((k) => k.seq),
            'update',
            () => insertMany(trx, 'cell_keys', RESULT_KEY_FIELDS, keyValues, resultsClash),
          );
        }
        return changed(undefined); // values changed: listings remembered elsewhere are stale
      },
      jobs,
    );
  }
}
