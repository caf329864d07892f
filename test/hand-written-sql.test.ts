import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { integerList } from '../adapters/storage/compiled-queries.ts';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';
import type { Cell, Column } from '../core/model.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

/**
 * The statements of an enrichment job are written by hand (integer IN lists as text, the results'
 * upsert as one multi-row INSERT): what goes in must come back exactly, and nothing but integers
 * is ever written into SQL text.
 */

test('integer lists are written as text only when every value is a safe integer', () => {
  expect(() => integerList([])).toThrow('empty IN list');
  expect(() => integerList([1, 2.5])).toThrow('2.5 is not an integer');
  expect(() => integerList([1, Number.NaN])).toThrow('NaN is not an integer');
  expect(() => integerList([1, '2) OR (1=1' as unknown as number])).toThrow('is not an integer');
  expect(() => integerList([2 ** 60])).toThrow('is not an integer');
});

const AWKWARD = [
  "it's",
  'back\\slash \\" and \\\\',
  'what? ?? (?, ?)',
  'ünïcode ✓ 中文 🙂',
  'line\nbreak\ttab',
  '0x00 \u0000 nul',
  "'); DROP TABLE cell_keys; --",
];

for (const dialect of DIALECTS) {
  describe(`results written by hand on ${dialect}`, () => {
    let storage: SqlStorage;
    let projectPk: number;
    let columns: Column[];
    let seqs: number[];
    beforeAll(async () => {
      storage = await openStorage(await freshDatabaseUrl(dialect));
      const ws = await storage.workspaces.create({ name: 'w', plan: 'pro' });
      const project = await storage.projects.create({
        workspaceId: ws.id,
        creatorId: 't',
        name: 'p',
        builderId: null,
        formData: null,
        columns: [
          { name: 'Name', type: 'input' },
          { name: 'Result', type: 'tool', toolId: 'formula' },
        ],
      });
      projectPk = project.pk;
      columns = await storage.projects.columns(projectPk);
      seqs = await storage.rows.insert(
        projectPk,
        columns,
        AWKWARD.map((v) => ({ [(columns[0] as Column).no]: { v } })),
      );
    });
    afterAll(() => storage.close());

    test('awkward strings, numbers, objects and errors come back exactly, status by status', async () => {
      const tool = columns[1] as Column;
      const cells: { seq: number; cell: Cell }[] = seqs.map((seq, i) => ({
        seq,
        cell:
          i === 1
            ? { v: null, s: 'error', e: AWKWARD[i] as string }
            : i === 2
              ? { v: { text: AWKWARD[i], n: -1.5, list: [1, null, 'x'] }, s: 'completed' }
              : { v: AWKWARD[i] as string, s: 'completed' },
      }));
      await storage.rows.moveStatus(projectPk, tool.no, ['pending'], 'running', seqs);
      await storage.rows.writeCells(projectPk, tool.no, cells);
      // Written twice: the second write is the upsert's update path.
      await storage.rows.writeCells(projectPk, tool.no, cells);
      const back = await storage.rows.getMany(projectPk, seqs, [tool.no]);
      expect(back.map((r) => r.cells[tool.no])).toEqual(cells.map((c) => c.cell));
      expect(back.map((r) => r.cells[(columns[0] as Column).no]?.v)).toEqual(AWKWARD);
    });
  });
}
