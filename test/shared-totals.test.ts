import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';
import type { Cell, Column } from '../core/model.ts';
import { parseFilterGroups } from '../core/rows/filter-parse.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

/**
 * Filtered totals shared between processes (adapters/storage/rows/shared-totals.ts): after another
 * process wrote — inserts, results, status moves, deletes — a filtered listing answers the exact
 * total without counting again. Each "process" is its own storage (pool, memory) on one database.
 */

const ROWS = 600;

/** A workspace and a project of these columns in `storage`; answers the project's pk and columns. */
async function projectOf(storage: SqlStorage, columns: { name: string; type: 'input' | 'tool'; toolId?: string }[]) {
  const ws = await storage.workspaces.create({ name: 'w', plan: 'pro' });
  const project = await storage.projects.create({
    workspaceId: ws.id,
    creatorId: 't',
    name: 'p',
    builderId: null,
    formData: null,
    columns,
  });
  return { projectPk: project.pk, columns: await storage.projects.columns(project.pk) };
}

describe.each(DIALECTS)('filtered totals shared between processes on %s', (dialect) => {
  let reader: SqlStorage;
  let writers: SqlStorage[];
  let projectPk: number;
  let columns: Column[];
  const col: Record<string, Column> = {};
  const cells = (i: number): Record<number, Cell> => ({
    [col.Name!.no]: { v: `Company ${i}` },
    [col.Size!.no]: { v: i % 100 },
  });

  beforeAll(async () => {
    const url = await freshDatabaseUrl(dialect);
    reader = await openStorage(url);
    writers = [await openStorage(url, { migrate: false }), await openStorage(url, { migrate: false })];
    ({ projectPk, columns } = await projectOf(reader, [
      { name: 'Name', type: 'input' },
      { name: 'Size', type: 'input' },
      { name: 'Score', type: 'tool', toolId: 'formula' },
    ]));
    for (const c of columns) col[c.name] = c;
    await reader.rows.insert(
      projectPk,
      columns,
      Array.from({ length: ROWS }, (_, i) => cells(i)),
    );
  });
  afterAll(async () => {
    for (const s of [reader, ...(writers ?? [])]) await s?.close();
  });

  const filters = () => ({
    'one column': [{ type: 'and', rules: [{ col_id: col.Name!.id, operator: 'contains', value: '7' }] }],
    'two columns': [
      {
        type: 'or',
        rules: [
          { col_id: col.Size!.id, operator: 'gte', value: 90 },
          { col_id: col.Score!.id, operator: 'eq', value: 'high' },
        ],
      },
    ],
    status: [{ type: 'and', rules: [{ col_id: col.Score!.id, operator: 'eq', value: 'completed', field: 'status' }] }],
  });

  const page = (filter: unknown) =>
    reader.rows.page({ projectPk, filter: parseFilterGroups(JSON.stringify(filter), columns), sort: [], limit: 10, offset: 0 });

  /** The truth: a plain count of the live rows the filter matches, from the rows as they are now. */
  async function freshCount(name: string): Promise<number> {
    const rows = (await reader.rows.page({ projectPk, filter: null, sort: [], limit: 100_000, offset: 0, toolCols: [col.Score!.no] })).rows;
    const value = (r: (typeof rows)[number], c: Column) => r.cells[String(c.no)];
    return rows.filter((r) => {
      if (name === 'one column') return String(value(r, col.Name!)?.v ?? '').includes('7');
      if (name === 'two columns') return Number(value(r, col.Size!)?.v) >= 90 || value(r, col.Score!)?.v === 'high';
      return value(r, col.Score!)?.s === 'completed';
    }).length;
  }

  /** The registration of every filter (its token changes when it is counted again). */
  const registrations = async () =>
    (
      await sql<{
        filter_key: string;
        used_at: number;
      }>`SELECT filter_key, used_at FROM filter_totals WHERE project_pk = ${projectPk} AND shard = 0 ORDER BY filter_key`.execute(
        reader.database.db,
      )
    ).rows.map((r) => `${r.filter_key}:${r.used_at}`);

  test('writes of other processes keep the totals exact, and nothing is counted again', async () => {
    for (const f of Object.values(filters())) await page(f);
    const before = await registrations();
    expect(before).toHaveLength(3);
    const [a, b] = writers as [SqlStorage, SqlStorage];
    const seqs = (await a.rows.page({ projectPk, filter: null, sort: [], limit: 100, offset: 0 })).rows.map((r) => r.seq);
    await a.rows.insert(projectPk, columns, [cells(7), cells(95), cells(1_000)]);
    await b.rows.writeCells(
      projectPk,
      col.Score!.no,
      seqs.slice(0, 20).map((seq, i) => ({ seq, cell: { v: i % 2 ? 'high' : 'low', s: 'completed' } })),
    );
    await a.rows.moveStatus(projectPk, col.Score!.no, ['completed'], 'pending', seqs.slice(0, 5));
    await b.rows.softDelete(projectPk, [seqs[30]!, seqs[97]!, seqs[17]!]);
    for (const [name, f] of Object.entries(filters())) {
      expect({ name, total: (await page(f)).total }).toEqual({ name, total: await freshCount(name) });
    }
    expect(await registrations()).toEqual(before);
  });

  // Several processes writing at once is production mode (MariaDB); embedded SQLite is one process.
  test.skipIf(dialect === 'sqlite')('writers in two processes at once, with reads between: the totals end exact', async () => {
    const [a, b] = writers as [SqlStorage, SqlStorage];
    const seqs = (await a.rows.page({ projectPk, filter: null, sort: [], limit: 300, offset: 100 })).rows.map((r) => r.seq);
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      work.push(a.rows.insert(projectPk, columns, [cells(2_000 + i)]));
      work.push(b.rows.writeCells(projectPk, col.Score!.no, [{ seq: seqs[i]!, cell: { v: 'high', s: 'completed' } }]));
      work.push(a.rows.softDelete(projectPk, [seqs[100 + i]!]));
      work.push(b.rows.moveStatus(projectPk, col.Score!.no, ['completed'], 'error', [seqs[i]!]));
      for (const f of Object.values(filters())) work.push(page(f));
    }
    await Promise.all(work);
    for (const [name, f] of Object.entries(filters())) {
      expect({ name, total: (await page(f)).total }).toEqual({ name, total: await freshCount(name) });
    }
  });
});

/**
 * Two writers moving different columns of the same rows at once (an enrichment column and the one
 * reading it): each write measures the rows before (locked) and after its change; a plain after-read
 * would see its snapshot of the other column, older than the before-read, and the total would drift.
 */
describe.skipIf(!DIALECTS.includes('mysql'))('a filter over two columns that two writers move at once, on mysql', () => {
  test('the total of "X or Y still working" ends exact (0) when both columns are done', async () => {
    const url = await freshDatabaseUrl('mysql');
    const reader = await openStorage(url);
    const [a, b] = [await openStorage(url, { migrate: false }), await openStorage(url, { migrate: false })];
    try {
      const { projectPk, columns } = await projectOf(reader, [
        { name: 'Name', type: 'input' },
        { name: 'X', type: 'tool', toolId: 'formula' },
        { name: 'Y', type: 'tool', toolId: 'formula' },
      ]);
      const [name, x, y] = columns as [Column, Column, Column];
      const rows = 60;
      await reader.rows.insert(
        projectPk,
        columns,
        Array.from({ length: rows }, (_, i) => ({ [name.no]: { v: `R${i}` } })),
      );
      const seqs = (await reader.rows.page({ projectPk, filter: null, sort: [], limit: rows, offset: 0 })).rows.map((r) => r.seq);
      await reader.rows.moveStatus(projectPk, x.no, ['pending'], 'queued', seqs);
      await reader.rows.moveStatus(projectPk, y.no, ['pending'], 'queued', seqs);
      const working = [
        {
          type: 'or',
          rules: [
            { col_id: x.id, field: 'status', operator: 'in', value: ['queued', 'running'] },
            { col_id: y.id, field: 'status', operator: 'in', value: ['queued', 'running'] },
          ],
        },
      ];
      const count = async () =>
        (
          await reader.rows.page({
            projectPk,
            filter: parseFilterGroups(JSON.stringify(working), columns),
            sort: [],
            limit: 1,
            offset: 0,
          })
        ).total;
      expect(await count()).toBe(rows); // registered, and exact
      // Each row's X and Y finish at the same moment, in two processes, one row after another.
      await Promise.all(
        seqs.flatMap((seq) => [
          a.rows
            .moveStatus(projectPk, x.no, ['queued'], 'running', [seq])
            .then(() => a.rows.moveStatus(projectPk, x.no, ['running'], 'completed', [seq])),
          b.rows
            .moveStatus(projectPk, y.no, ['queued'], 'running', [seq])
            .then(() => b.rows.moveStatus(projectPk, y.no, ['running'], 'completed', [seq])),
        ]),
      );
      const left = (
        await reader.rows.page({ projectPk, filter: null, sort: [], limit: rows, offset: 0, toolCols: [x.no, y.no] })
      ).rows.filter(
        (r) =>
          ['queued', 'running'].includes(r.cells[String(x.no)]?.s ?? '') || ['queued', 'running'].includes(r.cells[String(y.no)]?.s ?? ''),
      ).length;
      expect(left).toBe(0);
      expect(await count()).toBe(0);
    } finally {
      for (const s of [reader, a, b]) await s.close();
    }
  });
});
