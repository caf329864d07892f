/**
 * `bun run bench:inserts`: what a single-row insert costs, part by part. A `bun run start` process
 * (SERVE=rest, MariaDB + Redis, as production runs it) takes the same single POST rows in waves of 16
 * into four projects that differ by one extra each — none, a unique key, an auto-run tool column, a
 * watched filtered total — and for each the rate and p50/p95 per POST are printed with what every
 * statement shape cost MariaDB per insert (its performance_schema digests) and what each Redis
 * command cost per insert (INFO commandstats): the change log, the key check, the queued cells and
 * their job, the event publish are each a line of their own.
 *
 * Knobs (env): BENCH_INSERT_ROWS=3000 (per variant)  BENCH_INSERT_VARIANTS=plain,unique,tool,watched
 */
import Redis from 'ioredis';
import { sql } from 'kysely';
import { createDatabase, startMariaDb } from '../support/mariadb.ts';
import { startRedis } from '../support/redis.ts';
import { benchCases, httpQuery } from './rows-cases.ts';
import { createBenchProject, seedOverHttp } from './seed.ts';
import { startServiceProcess } from './service-process.ts';

const ROWS = Number(process.env.BENCH_INSERT_ROWS ?? 3_000);
/** Inserts before each variant's measure, so the first one does not pay the process's warm-up alone. */
const WARM_UP = Math.min(320, ROWS);
const VARIANTS = ['plain', 'unique', 'tool', 'watched'] as const;
type Variant = (typeof VARIANTS)[number];
const chosen = (process.env.BENCH_INSERT_VARIANTS?.split(',') ?? [...VARIANTS]) as Variant[];
for (const v of chosen)
  if (!VARIANTS.includes(v)) throw new Error(`BENCH_INSERT_VARIANTS: unknown variant "${v}" (${VARIANTS.join(', ')})`);
const WHAT: Record<Variant, string> = {
  plain: 'no extra (the change log and the event publish are always there)',
  unique: '+ a unique key (`domain`, on_conflict skip)',
  tool: '+ an auto-run tool column (`formula`): a queued cell and its job per insert',
  watched: '+ a filtered total watched (a `contains` listing asked for before the load)',
};

const mariadb = await startMariaDb({ flushEachCommit: true, bufferPoolMb: 1024, performanceSchema: true });
const redisServer = await startRedis({ ownServer: true });
const redis = new Redis(redisServer.url);
const service = await startServiceProcess({ databaseUrl: await createDatabase(mariadb.url, 'wfs'), redisUrl: redisServer.url });
const { api, storage } = service;
const db = storage.database.db;
async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: { 'service-api-key': api.key, 'content-type': 'application/json', accept: 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

interface Digest {
  text: string;
  calls: number;
  ms: number;
}

/** Statement shapes MariaDB ran since the last reset, the service's only (its database), by total time. */
async function digests(): Promise<Digest[]> {
  const r = await sql<{ t: string; n: number; ps: number }>`
    SELECT DIGEST_TEXT AS t, COUNT_STAR AS n, SUM_TIMER_WAIT AS ps
    FROM performance_schema.events_statements_summary_by_digest
    WHERE SCHEMA_NAME = 'wfs' AND DIGEST_TEXT IS NOT NULL ORDER BY SUM_TIMER_WAIT DESC`.execute(db);
  return r.rows.map((d) => ({ text: String(d.t), calls: Number(d.n), ms: Number(d.ps) / 1e9 }));
}

/** Redis commands since the last reset: calls and µs each. */
async function commandStats(): Promise<{ cmd: string; calls: number; usec: number }[]> {
  const info = await redis.info('commandstats');
  return info
    .split('\n')
    .flatMap((line) => {
      const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
      return m ? [{ cmd: m[1] as string, calls: Number(m[2]), usec: Number(m[3]) }] : [];
    })
    .sort((a, b) => b.usec - a.usec);
}

/** A digest's text, short: the verb and the tables it names. */
function shape(text: string): string {
  const flat = text.replace(/\s+/g, ' ').replace(/`/g, '');
  return flat.length > 110 ? `${flat.slice(0, 107)}…` : flat;
}

try {
  console.log(
    `## Single-row inserts, part by part (${new Date().toISOString().slice(0, 10)})\n\n` +
      `\`bun run bench:inserts\`: ${ROWS.toLocaleString('en-US')} single POST rows in waves of 16 per variant into a \`bun run start\` process ` +
      '(SERVE=rest, MariaDB with performance_schema + Redis, one commit flushed each); per insert: MariaDB statements by shape ' +
      '(count and server time) and Redis commands (count and server time).\n',
  );
  let offset = 0;
  for (const variant of chosen) {
    const { project, columns } = await createBenchProject(storage, service.workspaceId, `inserts ${variant}`);
    if (variant === 'unique') await call('PUT', `/projects/${project.id}/settings`, { unique_columns: ['domain'], on_conflict: 'skip' });
    if (variant === 'tool') {
      await call('POST', `/projects/${project.id}/columns`, {
        name: 'Upper',
        tool_id: 'formula',
        config: { expression: '$uppercase(name)' },
        auto_run: true,
      });
    }
    const contains = benchCases(columns).find((c) => c.key === 'b');
    if (variant === 'watched' && contains) await call('GET', `/projects/${project.id}/rows?${httpQuery(contains, 1)}`);
    // Inserts first: the process (JIT, caches of columns and statements) warms, as in a running service.
    await seedOverHttp(api, project.id, columns, offset, WARM_UP, { batch: 1, concurrency: 1, singles: WARM_UP, label: variant });
    offset += WARM_UP;
    await sql`TRUNCATE TABLE performance_schema.events_statements_summary_by_digest`.execute(db);
    await redis.config('RESETSTAT');
    const load = await seedOverHttp(api, project.id, columns, offset, ROWS, { batch: 1, concurrency: 1, singles: ROWS, label: variant });
    offset += ROWS;
    const one = load.singles;
    if (!one) throw new Error('no single inserts were measured');
    const shapes = await digests();
    const commands = await commandStats();
    const dbMs = shapes.reduce((s, d) => s + d.ms, 0);
    console.log(
      `### ${variant}: ${WHAT[variant]}\n\n**${Math.round(one.rowsPerSecond).toLocaleString('en-US')} rows/s**, ` +
        `p50 ${one.p50Ms.toFixed(1)} ms, p95 ${one.p95Ms.toFixed(1)} ms per POST; MariaDB ${((dbMs * 1000) / ROWS).toFixed(0)} µs ` +
        `per insert in ${(shapes.reduce((s, d) => s + d.calls, 0) / ROWS).toFixed(2)} statements.\n`,
    );
    console.log('| per insert | calls | µs | statement (MariaDB digest) or command (Redis) |\n|---|---:|---:|---|');
    for (const d of shapes.filter((x) => x.ms * 1000 >= ROWS)) {
      console.log(`| MariaDB | ${(d.calls / ROWS).toFixed(2)} | ${((d.ms * 1000) / ROWS).toFixed(0)} | \`${shape(d.text)}\` |`);
    }
    for (const c of commands.filter((x) => x.cmd !== 'config|resetstat' && x.cmd !== 'info')) {
      console.log(`| Redis | ${(c.calls / ROWS).toFixed(2)} | ${(c.usec / ROWS).toFixed(1)} | \`${c.cmd}\` |`);
    }
    console.log('');
  }
} finally {
  redis.disconnect();
  await service.stop();
  await redisServer.stop();
  await mariadb.stop();
}
