import type { Cell, Column } from '../../../core/model.ts';
import { isEmptyValue } from '../../../core/rows/cell-values.ts';
import { rowKey } from '../../../core/rows/unique-key.ts';
import { type FilledCell, UniqueKeyTaken } from '../../../core/ports/storage.ts';
import type { Database } from '../database.ts';
import { chunks } from '../compiled-queries.ts';
import { cellKey, parseCells, storedCell } from './cell-records.ts';
import type { WriteEffect } from './listing-memory.ts';
import { changed, type RowWrites, unchanged } from './row-write.ts';

const KEY_CHUNK = 500;

/**
 * Unique keys of rows (migration 018): which keys a project holds, the keys of every row when its
 * unique columns are set, and the empty cells an insert of an existing key fills. The keys of new
 * rows are written with the rows (RowWriter.insert); a deleted row's key goes with it.
 */
export class RowKeys {
  constructor(
    private readonly database: Database,
    private readonly writes: RowWrites,
  ) {}

  private get inList() {
    return this.database.dialect.limits.inListSize;
  }

  async findKeys(projectPk: number, keys: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const part of chunks([...new Set(keys)], this.database.dialect.limits.inListSize)) {
      const rows = await this.database.db
        .selectFrom('row_keys')
        .select(['key_hash', 'seq'])
        .where('project_pk', '=', projectPk)
        .where('key_hash', 'in', part)
        .execute();
      for (const r of rows) out.set(r.key_hash, Number(r.seq));
    }
    return out;
  }

  /**
   * Fills the empty input cells of existing rows (an insert of a key that exists, with on_conflict
   * "update"); cells with a value stay. One write per column, as for tool results. Answers the cells
   * filled.
   */
  async fillEmpty(projectPk: number, columns: Column[], updates: { seq: number; cells: Record<number, Cell> }[]): Promise<FilledCell[]> {
    const filled: FilledCell[] = [];
    for (const column of columns.filter((c) => c.type === 'input')) {
      const wanted = updates.filter((u) => !isEmptyValue(u.cells[column.no]?.v ?? null));
      if (wanted.length === 0) continue;
      const done = await this.writes.run(projectPk, { kind: 'cells', colNo: column.no, valuesToo: true }, async ({ trx, change }) => {
        const out: number[] = [];
        for (const part of chunks(wanted, this.inList)) {
          const read = trx
            .selectFrom('project_rows')
            .select(['seq', 'cells'])
            .where('project_pk', '=', projectPk)
            .where(
              'seq',
              'in',
              part.map((u) => u.seq),
            )
            .where('deleted_at', 'is', null);
          const stored = await this.database.dialect.locking.lockedRead(read).execute();
          const byseq = new Map(part.map((u) => [u.seq, u.cells[column.no] as Cell]));
          for (const r of stored) {
            const cells = parseCells(r.cells);
            const seq = Number(r.seq);
            if (!isEmptyValue(cells[column.no]?.v ?? null)) continue;
            const cell = byseq.get(seq) as Cell;
            cells[column.no] = storedCell(cell);
            await change([seq], 'update', async () => {
              await trx
                .updateTable('project_rows')
                .set({ cells: JSON.stringify(cells), updated_at: Date.now() })
                .where('project_pk', '=', projectPk)
                .where('seq', '=', seq)
                .execute();
              await trx
                .updateTable('cell_keys')
                .set(cellKey(cell.v, 'default'))
                .where('project_pk', '=', projectPk)
                .where('col_no', '=', column.no)
                .where('seq', '=', seq)
                .execute();
            });
            out.push(seq);
          }
        }
        return out.length ? changed(out) : unchanged(out);
      });
      for (const seq of done) filled.push({ seq, colNo: column.no, value: wanted.find((u) => u.seq === seq)?.cells[column.no]?.v ?? null });
    }
    return filled;
  }

  /**
   * Writes input cells of one live row, with their keys (and its unique key, from `keyColumns`), as
   * one write: one column's cells are a write to that column, several a write that may move any
   * listing. Cells set to null leave the row document. A key another row holds: UniqueKeyTaken.
   */
  async updateCells(projectPk: number, seq: number, cells: Record<number, Cell>, keyColumns?: number[]): Promise<boolean> {
    const colNos = Object.keys(cells).map(Number);
    const effect: WriteEffect = colNos.length === 1 ? { kind: 'cells', colNo: colNos[0] as number, valuesToo: true } : { kind: 'delete' };
    try {
      return await this.writes.run(projectPk, effect, async ({ trx, change }) => {
        const read = trx
          .selectFrom('project_rows')
          .select('cells')
          .where('project_pk', '=', projectPk)
          .where('seq', '=', seq)
          .where('deleted_at', 'is', null);
        const row = await this.database.dialect.locking.lockedRead(read).executeTakeFirst();
        if (!row) return unchanged(false);
        const stored = parseCells(row.cells);
        for (const [no, cell] of Object.entries(cells)) {
          if (cell.v === null && !cell.e) delete stored[no];
          else stored[no] = storedCell(cell);
        }
        await change([seq], 'update', async () => {
          await trx
            .updateTable('project_rows')
            .set({ cells: JSON.stringify(stored), updated_at: Date.now() })
            .where('project_pk', '=', projectPk)
            .where('seq', '=', seq)
            .execute();
          for (const [no, cell] of Object.entries(cells)) {
            await trx
              .updateTable('cell_keys')
              .set(cellKey(cell.v, 'default'))
              .where('project_pk', '=', projectPk)
              .where('col_no', '=', Number(no))
              .where('seq', '=', seq)
              .execute();
          }
          if (!keyColumns) return;
          // The row's key is made anew from its values as they now are; the primary key refuses one another row holds.
          await trx.deleteFrom('row_keys').where('project_pk', '=', projectPk).where('seq', '=', seq).execute();
          const key = rowKey(keyColumns.map((no) => stored[no]?.v ?? null));
          if (key) await trx.insertInto('row_keys').values({ project_pk: projectPk, key_hash: key, seq }).execute();
        });
        return changed(true);
      });
    } catch (e) {
      if (this.database.dialect.errors.isDuplicateKey(e)) throw new UniqueKeyTaken();
      throw e;
    }
  }

  /**
   * Makes these the project's unique keys (those of every live row, from PUT settings), replacing
   * the ones it had, together with its settings: a project never holds keys its settings do not name.
   */
  async replaceKeys(projectPk: number, settings: string, keys: { seq: number; key: string }[]): Promise<void> {
    // Through the one row-write path (it owns transactions and deadlock retries); the rows themselves do not change.
    await this.writes.run(projectPk, { kind: 'delete' }, async ({ trx }) => {
      await trx.deleteFrom('row_keys').where('project_pk', '=', projectPk).execute();
      for (const part of chunks(keys, KEY_CHUNK)) {
        await trx
          .insertInto('row_keys')
          .values(part.map((k) => ({ project_pk: projectPk, key_hash: k.key, seq: k.seq })))
          .execute();
      }
      await trx.updateTable('projects').set({ settings, updated_at: Date.now() }).where('pk', '=', projectPk).execute();
      return unchanged(undefined);
    });
  }
}
