/**
 * What MariaDB alone writes on this machine, without the service: the floor under `bench:import`.
 * An import stores each row in `project_rows` and each of its cells as a `cell_keys` record (three
 * index entries: the primary key and the number and text keys, docs/storage.md). This writes
 * BENCH_KEYS_ROWS rows of 6 cells (default 200,000) as multi-row INSERTs of pre-built text, in
 * transactions of 5,000 rows like an import page, on 1 and 2 connections, into the tables as
 * migrated and into the same tables without their secondary indexes, and prints records/s and what
 * that means for 1,000,000 rows.
 *
 *   bun run bench:keys
 */
import { type Connection, createConnection } from 'mysql2/promise';
import { openStorage } from '../../adapters/storage/sql-storage.ts';
import { setLogLevel } from '../../core/log.ts';
import { createDatabase, startMariaDb } from '../support/mariadb.ts';

const ROWS = Number(process.env.BENCH_KEYS_ROWS ?? 200_000);
const PAGE = 5_000;
const COLS = 6;
const CITIES = ['lyon', 'paris', 'berlin', 'madrid', 'milano', 'porto', 'gent'];

/** Row `i`'s six values, as the import bench's file holds them (lower-cased, as keys are). */
const valuesOf = (i: number) => [
  `company ${i} sas`,
  `https://company${i}.example`,
  CITIES[i % CITIES.length] as string,
  `+33 4 72 ${String(i % 100).padStart(2, '0')} ${String(i % 97).padStart(2, '0')} 00`,
  String((i * 37) % 5000),
  'software',
];

/** One page's statements: its rows, then its cells' keys in statements of 2,000 records. */
function pageStatements(c: Connection, first: number, last: number): string[] {
  const rows: string[] = [];
  const keys: string[] = [];
  for (let seq = first; seq <= last; seq++) {
    const values = valuesOf(seq);
    rows.push(`(1, ${seq}, ${c.escape(JSON.stringify(Object.fromEntries(values.map((v, i) => [i + 1, { v }]))))}, 1, 1, NULL)`);
    values.forEach((v, i) => {
      const num = Number.isFinite(Number(v)) ? Number(v) : null;
      keys.push(`(1, ${i + 1}, ${seq}, 'default', 0, ${num === null ? 1 : 0}, ${num ?? 'NULL'}, ${c.escape(v)}, NULL)`);
    });
  }
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += 500)
    out.push(
      `INSERT INTO project_rows (project_pk, seq, cells, created_at, updated_at, deleted_at) VALUES ${rows.slice(i, i + 500).join(', ')}`,
    );
  for (let i = 0; i < keys.length; i += 2_000)
    out.push(
      `INSERT INTO cell_keys (project_pk, col_no, seq, status, is_empty, num_missing, num_key, text_key, text_full) VALUES ${keys.slice(i, i + 2_000).join(', ')}`,
    );
  return out;
}

/** Writes every page over `lanes` connections (page k on lane k mod lanes); answers the seconds taken. */
async function writeAll(url: string, lanes: number): Promise<number> {
  const conns = await Promise.all(Array.from({ length: lanes }, () => createConnection(url)));
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (c, lane) => {
      for (let first = 1 + lane * PAGE; first <= ROWS; first += PAGE * lanes) {
        await c.query('BEGIN');
        for (const statement of pageStatements(c, first, Math.min(ROWS, first + PAGE - 1))) await c.query(statement);
        await c.query('COMMIT');
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(conns.map((c) => c.end()));
  return seconds;
}

setLogLevel('warn');
const server = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 2048 });
try {
  console.log(`MariaDB alone: ${ROWS.toLocaleString('en-US')} rows of ${COLS} cells, pages of ${PAGE.toLocaleString('en-US')} rows`);
  let n = 0;
  for (const indexes of ['as migrated', 'primary keys only'] as const) {
    for (const lanes of [1, 2]) {
      const url = await createDatabase(server.url, `keys_${n++}`);
      const storage = await openStorage(url);
      await storage.close();
      if (indexes === 'primary keys only') {
        const c = await createConnection(url);
        await c.query('DROP INDEX cell_keys_num ON cell_keys');
        await c.query('DROP INDEX cell_keys_text ON cell_keys');
        await c.query('DROP INDEX project_rows_live ON project_rows');
        await c.end();
      }
      const seconds = await writeAll(url, lanes);
      const cells = ROWS * COLS;
      console.log(
        `  ${indexes}, ${lanes} connection${lanes > 1 ? 's' : ''}: ${seconds.toFixed(1)} s — ${Math.round(cells / seconds).toLocaleString('en-US')} cell records/s with their rows; 1,000,000 rows ≈ ${((seconds * 1_000_000) / ROWS).toFixed(0)} s`,
      );
    }
  }
} finally {
  await server.stop();
}
