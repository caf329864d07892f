import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { type ListingShape, ListingMemory } from '../adapters/storage/rows/listing-memory.ts';
import { RowChanges } from '../adapters/storage/rows/row-changes.ts';
import { SqlRowRepo } from '../adapters/storage/rows/sql-row-repo.ts';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';
import type { Cell, Column } from '../core/model.ts';
import { parseFilterGroups, parseSortRules } from '../core/rows/filter-parse.ts';
import type { RowPageQuery } from '../core/ports/storage.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

/**
 * Remembered listings (adapters/storage/rows/listing-memory.ts): deep pages that start from a
 * remembered anchor, and filtered totals that this process's own writes keep exact, must always
 * give what a repository that remembers nothing gives — after inserts, results, status moves and
 * deletes, from this process or another.
 */

const ROWS = 2_400; // deep pages start from anchors at offset 1,000 and more
const TAGS = ['alpha', 'alpha ', 'Beta', 'beta', 'gamma', 'ünïcode', ''];

function cellsOf(cols: Record<string, Column>, i: number): Record<number, Cell> {
  const score = i % 7 === 0 ? '' : i % 11 === 0 ? 'n/a' : String((i % 50) / 4);
  return {
    [cols.Name!.no]: { v: `Name ${i % 37}` },
    [cols.Score!.no]: { v: score },
    [cols.Tag!.no]: { v: TAGS[i % TAGS.length] },
  };
}

describe.each(DIALECTS)('remembered listings on %s', (dialect) => {
  let storage: SqlStorage;
  let url: string;
  let workspaceId: string;
  let projectPk: number;
  let columns: Column[];
  const col: Record<string, Column> = {};
  /** A repository that remembers nothing: the reference. */
  const cold = () => new SqlRowRepo(storage.database);

  beforeAll(async () => {
    url = await freshDatabaseUrl(dialect);
    storage = await openStorage(url);
    const ws = await storage.workspaces.create({ name: 'w', plan: 'pro' });
    workspaceId = ws.id;
    const project = await storage.projects.create({
      workspaceId: ws.id,
      creatorId: 't',
      name: 'p',
      builderId: null,
      formData: null,
      columns: [
        { name: 'Name', type: 'input' },
        { name: 'Score', type: 'input' },
        { name: 'Tag', type: 'input' },
        { name: 'Result', type: 'tool', toolId: 'formula' },
      ],
    });
    projectPk = project.pk;
    columns = await storage.projects.columns(projectPk);
    for (const c of columns) col[c.name] = c;
    const rows = Array.from({ length: ROWS }, (_, i) => cellsOf(col, i));
    for (let i = 0; i < rows.length; i += 500) await storage.rows.insert(projectPk, columns, rows.slice(i, i + 500));
  });

  afterAll(async () => {
    await storage?.close();
  });

  const rule = (name: string, operator: string, value?: unknown) => ({ col_id: col[name]!.id, operator, value });
  const sortBy = (name: string, direction: 'asc' | 'desc', number = false) => ({
    col_id: col[name]!.id,
    direction,
    sort_as_number: number,
  });

  function query(shape: { filter?: unknown[]; sort?: unknown[] }, offset: number, limit = 50): RowPageQuery {
    return {
      projectPk,
      filter: shape.filter ? parseFilterGroups(JSON.stringify(shape.filter), columns) : null,
      sort: shape.sort ? parseSortRules(JSON.stringify(shape.sort), columns) : [],
      limit,
      offset,
    };
  }

  // Built once the columns exist (rules name column ids).
  const shapes = (): Record<string, { filter?: unknown[]; sort?: unknown[] }> => ({
    'insertion order': {},
    'numeric sort, missing numbers last': { sort: [sortBy('Score', 'asc', true)] },
    'numeric sort descending': { sort: [sortBy('Score', 'desc', true)] },
    'text sort with ties, trailing spaces and empties': { sort: [sortBy('Tag', 'asc')] },
    'text sort descending': { sort: [sortBy('Name', 'desc')] },
    'two sort rules': { sort: [sortBy('Tag', 'desc'), sortBy('Score', 'asc', true)] },
    'filter on one column': { filter: [{ type: 'and', rules: [rule('Name', 'not_contains', '1')] }] },
    'filter + sort': { filter: [{ type: 'and', rules: [rule('Name', 'not_contains', '1')] }], sort: [sortBy('Score', 'asc', true)] },
    'status filter + sort': {
      filter: [{ type: 'and', rules: [{ ...rule('Result', 'eq', 'pending'), field: 'status' }] }],
      sort: [sortBy('Tag', 'asc')],
    },
    'filter on two columns + sort': {
      filter: [{ type: 'or', rules: [rule('Tag', 'eq', 'alpha'), rule('Score', 'gt', 4)] }],
      sort: [sortBy('Name', 'asc'), sortBy('Score', 'desc', true)],
    },
  });
  const SHAPE_NAMES = [
    'insertion order',
    'numeric sort, missing numbers last',
    'numeric sort descending',
    'text sort with ties, trailing spaces and empties',
    'text sort descending',
    'two sort rules',
    'filter on one column',
    'filter + sort',
    'status filter + sort',
    'filter on two columns + sort',
  ];

  /** Totals are shared through the database: the reference forgets them first, and counts. */
  async function coldPage(q: RowPageQuery) {
    await sql`DELETE FROM filter_totals WHERE project_pk = ${projectPk}`.execute(storage.database.db);
    return cold().page(q);
  }

  async function expectSame(q: RowPageQuery, label: string): Promise<void> {
    const warm = await storage.rows.page(q);
    const reference = await coldPage(q);
    const seqs = (p: typeof warm) => p.rows.map((r) => r.seq);
    expect({ label, total: warm.total, seqs: seqs(warm) }).toEqual({ label, total: reference.total, seqs: seqs(reference) });
  }

  test.each(SHAPE_NAMES)('deep pages read forward from anchors give the OFFSET pages: %s', async (name) => {
    const shape = shapes()[name]!;
    expect(shape).toBeDefined();
    const total = (await coldPage(query(shape, 0, 1))).total;
    expect(total).toBeGreaterThan(1_200); // deep enough for anchors
    const deep = 1_000;
    // Next pages in order, the same page again, a page between anchors, a page size that straddles them.
    for (const offset of [deep, deep + 50, deep + 100, deep + 50, deep + 75, deep + 150, deep + 20])
      await expectSame(query(shape, offset), `${name} @${offset}`);
    await expectSame(query(shape, deep + 60, 37), `${name} @${deep + 60}/37`);
  });

  test('the last pages of a selective filter + sort (read from the filter column) are in sort order', async () => {
    // Oracle in plain JavaScript: rows whose Name contains "1", by Score as a number, missing last, then insertion order.
    const all = (await cold().page(query({}, 0, ROWS))).rows.map((r, i) => ({ seq: r.seq, i }));
    const score = (i: number) => {
      const v = cellsOf(col, i)[col.Score!.no]!.v as string;
      return v === '' || v === 'n/a' ? null : Number(v);
    };
    const expected = all
      .filter(({ i }) => `name ${i % 37}`.includes('1'))
      .sort((a, b) => {
        const [x, y] = [score(a.i), score(b.i)];
        if ((x === null) !== (y === null)) return x === null ? 1 : -1;
        return (x ?? 0) - (y ?? 0) || a.seq - b.seq;
      })
      .map((r) => r.seq);
    expect(expected.length).toBeGreaterThan(600);
    const shape = { filter: [{ type: 'and', rules: [rule('Name', 'contains', '1')] }], sort: [sortBy('Score', 'asc', true)] };
    for (const offset of [0, 50, expected.length - 120, expected.length - 50, expected.length - 20]) {
      const p = await storage.rows.page(query(shape, offset));
      expect(p.total).toBe(expected.length);
      expect(p.rows.map((r) => r.seq)).toEqual(expected.slice(offset, offset + 50));
    }
  });

  test('own writes keep remembered totals and anchors exact; so do writes by another process', async () => {
    const all = Object.values(shapes());
    const check = async (when: string) => {
      for (const s of all) {
        for (const offset of [0, 1_000, 1_050]) await expectSame(query(s, offset), `${when}: ${JSON.stringify(s)} @${offset}`);
      }
    };
    await check('before writes');
    // Own writes: inserts (some match the filters), results and status moves on filtered and
    // sorted columns, deletes.
    const seqs = await storage.rows.insert(projectPk, columns, [cellsOf(col, 1), cellsOf(col, 2), cellsOf(col, 3)]);
    await check('after an insert');
    const page = await cold().page(query({}, 200, 40));
    const some = page.rows.map((r) => r.seq);
    await storage.rows.writeCells(
      projectPk,
      col.Result!.no,
      some.map((seq, i) => ({ seq, cell: { v: i, s: 'completed' } })),
    );
    await check('after results in a column nobody filters on');
    const { rows: first } = await cold().page(query({}, 0, 30));
    await storage.rows.moveStatus(
      projectPk,
      col.Name!.no,
      ['default'],
      'default',
      first.map((r) => r.seq),
    );
    await check('after a status move on the filtered column');
    await storage.rows.moveStatus(projectPk, col.Result!.no, ['pending'], 'queued', some.slice(10, 30));
    await check('after a status move on a column a status filter reads');
    await storage.rows.softDelete(projectPk, [...seqs.slice(0, 2), ...some.slice(0, 5)]);
    await check('after deletes');
    // Another process: its own repository and memory, the same database.
    const other = cold();
    await other.insert(projectPk, columns, [cellsOf(col, 11), cellsOf(col, 21)]);
    await other.softDelete(projectPk, some.slice(5, 9));
    await check('after writes by another process');
  });

  test("another process's writes are followed through the change log: anchors stay or move with new rows, the pages stay exact", async () => {
    const memory = new ListingMemory();
    const mine = new SqlRowRepo(storage.database, memory);
    const other = cold();
    const plain = query({}, 1_100);
    const sortedByScore = query({ sort: [sortBy('Score', 'asc', true)] }, 1_100);
    const same = async (q: RowPageQuery, label: string) => {
      const [warm, reference] = [await mine.page(q), await coldPage(q)];
      expect({ label, total: warm.total, seqs: warm.rows.map((r) => r.seq) }).toEqual({
        label,
        total: reference.total,
        seqs: reference.rows.map((r) => r.seq),
      });
    };
    await same(plain, 'insertion order');
    await same(sortedByScore, 'sorted');
    // Results in a column neither listing reads, and a new row (after every anchor in insertion order).
    const { rows } = await cold().page(query({}, 500, 20));
    await other.writeCells(
      projectPk,
      col.Result!.no,
      rows.map((r, i) => ({ seq: r.seq, cell: { v: `r${i}`, s: 'completed' } })),
    );
    await other.insert(projectPk, columns, [cellsOf(col, 5)]);
    await same(plain, 'insertion order after writes by another process');
    await same(sortedByScore, 'sorted after writes by another process');
    // Both listings kept their anchors; the sorted one counted the new row in.
    expect({ caughtUp: memory.stats.caughtUp, forgotten: memory.stats.forgotten }).toEqual({ caughtUp: 2, forgotten: 0 });
    expect(memory.stats.settled).toBeGreaterThanOrEqual(2); // one per listing, more when a moved anchor passed the page
    const rowChanges = await sql<{
      kind: number;
    }>`SELECT kind FROM row_changes WHERE project_pk = ${projectPk} ORDER BY id DESC LIMIT 2`.execute(storage.database.db);
    expect(rowChanges.rows.map((r) => Number(r.kind))).toEqual([1, 3]); // the insert, then (before it) the results
  });

  test('the change log keeps ten minutes of writes: older records are pruned by the writers', async () => {
    const changes = new RowChanges(storage.database);
    const record = () => storage.database.db.transaction().execute((trx) => changes.record(trx, projectPk, { kind: 'delete' }));
    const ids = async () =>
      (
        await sql<{ id: number }>`SELECT id FROM row_changes WHERE project_pk = ${projectPk} ORDER BY id`.execute(storage.database.db)
      ).rows.map((r) => Number(r.id));
    const t0 = 1_000_000_000;
    await record();
    changes.pruneNow(t0); // notes the newest id it wrote, at t0
    const old = (await ids()).at(-1)!;
    await record();
    changes.pruneNow(t0 + 5 * 60_000);
    expect(await ids()).toContain(old); // five minutes: kept
    changes.pruneNow(t0 + 11 * 60_000);
    await Bun.sleep(200); // pruning runs after the write, in the background
    const left = await ids();
    expect(left.every((id) => id > old)).toBe(true);
    expect(left.length).toBeGreaterThan(0); // the younger record stays
  });

  test("a project's columns are remembered until a column is added, by this process or another", async () => {
    const project = await storage.projects.getByPk(projectPk);
    const before = await storage.projects.columns(project!);
    expect(before.map((c) => c.name)).toEqual(['Name', 'Score', 'Tag', 'Result']);
    const other = await openStorage(url, { migrate: false });
    try {
      await other.projects.addColumn(projectPk, { name: 'Added elsewhere', type: 'input' });
    } finally {
      await other.close();
    }
    // The project as read now carries a newer columnsVersion: the new column shows at once.
    const reread = await storage.projects.get(workspaceId, project!.id);
    expect(reread!.columnsVersion).toBe(project!.columnsVersion + 1);
    expect((await storage.projects.columns(reread!)).map((c) => c.name)).toEqual(['Name', 'Score', 'Tag', 'Result', 'Added elsewhere']);
    columns = await storage.projects.columns(projectPk);
  });

  test('concurrent own writes and reads end with the exact totals', async () => {
    const filtered = { filter: [{ type: 'and', rules: [rule('Name', 'contains', '2')] }], sort: [sortBy('Score', 'asc', true)] };
    const reads = () =>
      Promise.all([storage.rows.page(query(filtered, 0)), storage.rows.page(query(filtered, 1_000)), storage.rows.page(query({}, 1_100))]);
    await reads();
    const { rows } = await cold().page(query({}, 300, 200));
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      work.push(storage.rows.insert(projectPk, columns, [cellsOf(col, 1_000 + i)]));
      const seq = rows[i]!.seq;
      work.push(storage.rows.moveStatus(projectPk, col.Name!.no, ['default'], 'default', [seq]));
      work.push(storage.rows.softDelete(projectPk, [rows[100 + i]!.seq]));
      work.push(reads());
    }
    await Promise.all(work);
    await expectSame(query(filtered, 0), 'filter + sort, page 1');
    await expectSame(query(filtered, 1_000), 'filter + sort, deep');
    await expectSame(query({}, 1_100), 'insertion order, deep');
  });
});

describe('ListingMemory', () => {
  const shape = (key: string, filterCols: number[], sortCols: number[] = [], statusCols: number[] = []): ListingShape => ({
    key,
    projectPk: 1,
    filter: filterCols.length || statusCols.length ? { kind: 'group', type: 'and', rules: [] } : null,
    filterCols: [...filterCols, ...statusCols],
    valueCols: filterCols,
    statusCols,
    sortCols,
  });
  const cells = (colNo: number, valuesToo = true) => ({ kind: 'cells', colNo, valuesToo }) as const;

  const at = (version: number, changeId = version) => ({ version, changeId });
  const insert = (firstSeq: number) => ({ kind: 'insert', firstSeq, rows: 1 }) as const;

  test('an entry is current at the state it was made at; behind it follows exactly the writes in between, or is forgotten', () => {
    const m = new ListingMemory();
    m.rememberAnchors(shape('t', [2]), at(10), [[1000, { keys: [], seq: 1200 }]]);
    expect(m.lookup('t', at(10))?.current).toBe(true);
    const behind = m.lookup('t', at(12, 15));
    expect(behind?.current).toBe(false);
    // Two writes to a column the listing does not read, from any process: the anchors stand.
    expect(m.catchUp(behind!.entry, [cells(4), cells(5, false)], at(12, 15))?.anchors.size).toBe(1);
    expect(m.lookup('t', at(12, 15))?.current).toBe(true);
    // Three writes happened but the log shows two (a slow write committed an older id): forgotten.
    const again = m.lookup('t', at(15, 20))!;
    expect(m.catchUp(again.entry, [cells(4), cells(4)], at(15, 20))).toBeUndefined();
    expect(m.lookup('t', at(15, 20))).toBeUndefined();
    // Too far behind (the log answered undefined): forgotten.
    m.rememberAnchors(shape('u', [2]), at(1), [[1000, { keys: [], seq: 1200 }]]);
    expect(m.catchUp(m.lookup('u', at(900))!.entry, undefined, at(900))).toBeUndefined();
  });

  test('a write to a column a listing filters on drops its anchors; moving statuses only touches status filters', () => {
    const m = new ListingMemory();
    m.rememberAnchors(shape('a', [2]), at(1), [[1000, { keys: [], seq: 1200 }]]);
    m.rememberAnchors(shape('s', [], [], [3]), at(1), [[1000, { keys: [], seq: 1200 }]]);
    expect(m.catchUp(m.lookup('a', at(2))!.entry, [cells(3, false)], at(2))?.anchors.size).toBe(1);
    expect(m.catchUp(m.lookup('s', at(2))!.entry, [cells(3, false)], at(2))?.anchors.size).toBe(0);
    expect(m.catchUp(m.lookup('a', at(3))!.entry, [cells(2)], at(3))?.anchors.size).toBe(0);
  });

  test('anchors: new rows are pending until an anchor is used, then counted in; a write to a sort column or too many rows drop them', () => {
    const m = new ListingMemory();
    m.rememberAnchors(shape('plain', []), at(1), [
      [1000, { keys: [], seq: 1200 }],
      [2000, { keys: [], seq: 2400 }],
    ]);
    m.rememberAnchors(shape('sorted', [], [3]), at(1), [[1000, { keys: [[0, 5]], seq: 1200 }]]);
    const plain = m.catchUp(m.lookup('plain', at(2))!.entry, [{ kind: 'insert', firstSeq: 2000, rows: 2 }], at(2))!;
    expect(plain.pending).toEqual([2000, 2001]);
    expect(ListingMemory.nearest(plain, 1500)).toEqual({ offset: 1000, at: { keys: [], seq: 1200 }, unseen: [2000, 2001] });
    expect(ListingMemory.nearest(plain, 999)).toBeUndefined();
    // Counted in: the anchor at 2000 (row seq 2400) has both new rows before it and moves to 2002.
    m.settle(plain, 2000, 2);
    expect(ListingMemory.nearest(plain, 2100)).toEqual({ offset: 2002, at: { keys: [], seq: 2400 }, unseen: [] });
    const sorted = m.catchUp(m.lookup('sorted', at(2))!.entry, [insert(2000)], at(2))!;
    expect(sorted.anchors.size).toBe(1);
    expect(m.catchUp(m.lookup('sorted', at(3))!.entry, [cells(3)], at(3))?.anchors.size).toBe(0);
    const many = m.catchUp(m.lookup('plain', at(3))!.entry, [{ kind: 'insert', firstSeq: 5000, rows: 300 }], at(3))!;
    expect(many.anchors.size).toBe(0);
    // Anchors read at another state start the entry afresh.
    m.rememberAnchors(shape('plain', []), at(4), [[3000, { keys: [], seq: 3600 }]]);
    expect([...(m.lookup('plain', at(4))?.entry.anchors.keys() ?? [])]).toEqual([3000]);
  });
});
