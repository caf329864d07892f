import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type SqlStorage } from '../adapters/storage/sql-storage.ts';

/**
 * Two connections to one SQLite file on one thread (a second storage in a process, as the
 * benchmarks' "other process" and tools open it): a write waiting for the other's lock waits
 * without blocking the thread, so the holder commits and both writes land. With SQLite's own
 * (blocking) busy wait, the holder could not run until the waiter gave up: "database is locked".
 */

const dir = mkdtempSync(join(tmpdir(), 'wfs-sqlite-two-'));
const url = `sqlite:${join(dir, 'two.sqlite')}`;
let a: SqlStorage;
let b: SqlStorage;
afterAll(async () => {
  await b?.close();
  await a?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('writes through two connections on one thread interleave and both commit', async () => {
  a = await openStorage(url);
  b = await openStorage(url, { migrate: false });
  const ws = await a.workspaces.create({ name: 'two', plan: 'pro' });
  const project = await a.projects.create({
    workspaceId: ws.id,
    creatorId: 'test',
    name: 'two',
    builderId: null,
    formData: null,
    columns: [{ name: 'Name', type: 'input' }],
  });
  const [name] = await a.projects.columns(project.pk);
  const row = (who: string, i: number) => ({ [(name as { no: number }).no]: { v: `${who} ${i}` } });
  const writes: Promise<number[]>[] = [];
  for (let i = 0; i < 20; i++) {
    writes.push(a.rows.insert(project.pk, [name as never], [row('a', i)]));
    writes.push(b.rows.insert(project.pk, [name as never], [row('b', i)]));
  }
  const results = await Promise.all(writes);
  expect(results.flat().length).toBe(40);
  expect((await a.rows.counts([project.pk])).get(project.pk)).toBe(40);
}, 60_000);
