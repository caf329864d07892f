import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Connection, createConnection } from 'mysql2/promise';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';
import { PageWrites } from '../core/handlers/builder/page-writes.ts';
import type { BuilderCheckpoint, Cell, Column } from '../core/model.ts';
import type { BuilderRunState } from '../core/ports/storage.ts';
import { until } from './support/until.ts';
import { DIALECTS, freshDatabaseUrl } from './support/databases.ts';

/**
 * Builder pages written two at a time on MariaDB (core/handlers/builder/page-writes.ts): the second page's
 * rows go in beside the first, its checkpoint after the first's. Here a third writer holds what the
 * first page needs and then asks for the second page's rows — a wait cycle the database cannot see,
 * since the second page waits for the first in the service. The second page must give way.
 */
describe.if(DIALECTS.includes('mysql'))('builder pages written side by side on MariaDB', () => {
  let url: string;
  let storage: SqlStorage;
  let projectPk: number;
  let columns: Column[];
  const open: Connection[] = [];
  const connect = async () => {
    const c = await createConnection(url);
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    url = await freshDatabaseUrl('mysql');
    storage = await openStorage(url);
    const ws = await storage.workspaces.create({ name: 'w', plan: 'pro' });
    const project = await storage.projects.create({
      workspaceId: ws.id,
      creatorId: 't',
      name: 'import',
      builderId: 'csv_import_builder',
      formData: null,
      columns: [{ name: 'Name', type: 'input' }],
    });
    projectPk = project.pk;
    columns = await storage.projects.columns(projectPk);
  });
  afterAll(async () => {
    for (const c of open) await c.end().catch(() => {});
    await storage?.close();
  });

  const rowsOf = (prefix: string, n: number): Record<number, Cell>[] =>
    Array.from({ length: n }, (_, i) => ({ [columns[0]!.no]: { v: `${prefix}${String(i).padStart(3, '0')}` } }));
  const checkpoint = (pages: number): BuilderCheckpoint => ({ rows_created: pages * 100, pages });
  const pageState = (pages: number, after: Promise<unknown> | undefined): BuilderRunState => ({
    builderStatus: 'running',
    checkpoint: checkpoint(pages),
    checkpointWas: pages === 1 ? null : checkpoint(pages - 1),
    ...(after ? { after } : {}),
  });

  test('a page waiting for the one before gives way to a writer that needs its rows: both pages commit once, in order', async () => {
    // The third writer first holds the project record, which the first page's checkpoint needs.
    const third = await connect();
    await third.query('BEGIN');
    await third.query('SELECT pk FROM projects WHERE pk = ? FOR UPDATE', [projectPk]);

    const pages = new PageWrites(2, 0, 0, 1_000);
    await pages.add(100, (after) =>
      storage.rows.insert(projectPk, columns, rowsOf('company a', 100), { builderState: pageState(1, after) }),
    );
    const second = pages.add(100, (after) =>
      storage.rows.insert(projectPk, columns, rowsOf('company b', 100), { builderState: pageState(2, after) }),
    );

    // Both pages' rows are in (not committed): one that reads uncommitted data sees them.
    const peek = await connect();
    await peek.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
    const inserted = async () => {
      const [r] = (await peek.query('SELECT COUNT(*) AS n FROM cell_keys WHERE project_pk = ?', [projectPk])) as [{ n: number }[], unknown];
      return Number(r[0]?.n);
    };
    await until(async () => (await inserted()) === 200, 10_000);

    // Now the third writer asks for the second page's keys: it waits for that page, which waits for the first, which waits for it.
    const started = performance.now();
    await third.query(
      'SELECT seq FROM cell_keys FORCE INDEX (cell_keys_text) WHERE project_pk = ? AND col_no = ? AND is_empty = 0 AND text_key >= ? FOR UPDATE',
      [projectPk, columns[0]!.no, 'company b'],
    );
    const waited = performance.now() - started;
    await third.query('COMMIT');
    await second;
    await pages.drain();

    // The third writer got its rows once the second page let go after its 5 s bound, not after the lock timeout (50 s).
    expect(waited).toBeLessThan(45_000);
    expect({ committed: pages.committed, committedPages: pages.committedPages }).toEqual({ committed: 200, committedPages: 2 });
    const stored = await storage.rows.pageAfter(projectPk, 0, 1_000);
    expect(stored.map((r) => r.cells[columns[0]!.no]?.v)).toEqual(
      [...rowsOf('company a', 100), ...rowsOf('company b', 100)].map((c) => c[columns[0]!.no]?.v),
    );
    expect((await storage.projects.getByPk(projectPk))?.builderCheckpoint).toEqual(checkpoint(2));
    expect((await storage.rows.counts([projectPk])).get(projectPk)).toBe(200);
  }, 90_000);

  test('when a page fails, the page written beside it fails too and nothing of it stays', async () => {
    const before = (await storage.rows.counts([projectPk])).get(projectPk) ?? 0;
    const pages = new PageWrites(2, 0, 0);
    const broken = new Error('the source broke');
    await pages.add(100, async () => {
      await Bun.sleep(200);
      throw broken;
    });
    const second = pages.add(100, (after) =>
      storage.rows.insert(projectPk, columns, rowsOf('company c', 100), {
        builderState: { builderStatus: 'running', checkpoint: checkpoint(4), ...(after ? { after } : {}) },
      }),
    );
    await expect(second).rejects.toBe(broken);
    await expect(pages.drain()).rejects.toBe(broken);
    expect(pages.committed).toBe(0);
    expect((await storage.rows.counts([projectPk])).get(projectPk)).toBe(before);
    expect((await storage.projects.getByPk(projectPk))?.builderCheckpoint).toEqual(checkpoint(2));
  });
});
