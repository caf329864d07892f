/**
 * `bun run bench:start`: the row listings of a `bun run start` process as production runs it (its
 * own process, SERVE=rest, MariaDB + Redis), on a project loaded the way users load one — every
 * row by its own POST rows, in waves of 16 — with no statistics refresh. Prints the load's rate and
 * latency per POST, then each case's HTTP p50 and its ratio to the unfiltered page 1.
 *
 * Knobs (env): BENCH_ROWS=100000  BENCH_SAMPLES=25
 */
import { createDatabase, startMariaDb } from '../support/mariadb.ts';
import { startRedis } from '../support/redis.ts';
import { benchCases, httpQuery } from './rows-cases.ts';
import { createBenchProject, seedOverHttp } from './seed.ts';
import { startServiceProcess } from './service-process.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 25);
const mariadb = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 2048 });
const redis = await startRedis({ ownServer: true });
const service = await startServiceProcess({ databaseUrl: await createDatabase(mariadb.url, 'wfs'), redisUrl: redis.url });
const { api, storage } = service;
try {
  const { project, columns } = await createBenchProject(storage, service.workspaceId, 'repro');
  const load = await seedOverHttp(api, project.id, columns, 0, ROWS, { batch: 1000, concurrency: 4, singles: ROWS, label: 'start' });
  const one = load.singles;
  console.log(
    `${ROWS.toLocaleString('en-US')} rows by single POST rows in waves of 16 into a bun run start process (MariaDB + Redis): ` +
      `${Math.round(one?.rowsPerSecond ?? 0).toLocaleString('en-US')} rows/s, p50 ${one?.p50Ms.toFixed(1)} ms, p95 ${one?.p95Ms.toFixed(1)} ms per POST`,
  );
  let pageOne = 0;
  for (const c of benchCases(columns)) {
    for (const page of [1, 500]) {
      const t: number[] = [];
      for (let r = 0; r < SAMPLES; r++) {
        const t0 = performance.now();
        await (
          await fetch(`${api.url}/projects/${project.id}/rows?${httpQuery(c, page)}`, { headers: { 'service-api-key': api.key } })
        ).text();
        t.push(performance.now() - t0);
      }
      t.sort((a, b) => a - b);
      const p50 = t[Math.floor(t.length / 2)] ?? 0;
      if (c.key === 'a' && page === 1) pageOne = p50;
      console.log(`${c.label}, page ${page}: HTTP p50 ${p50.toFixed(2)} ms (${(p50 / pageOne).toFixed(2)}× page 1)`);
    }
  }
} finally {
  await service.stop();
  await redis.stop();
  await mariadb.stop();
}
