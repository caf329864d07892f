import { resolve } from 'node:path';

/**
 * `bun run bench:smoke`: every benchmark the docs name, each in a short mode (small data, few
 * samples), so a broken one is caught by CI rather than by the next person who runs it. It checks
 * that each one runs to its end and prints its figures; the figures of a short run mean nothing.
 *
 * `bench:directus` is left out unless BENCH_SMOKE_DIRECTUS=1: its first run installs Directus from
 * npm (≈3 min), more than the rest together.
 */

interface Smoke {
  script: string;
  args?: string[];
  env: Record<string, string>;
  /** What its output shows once it ran to the end. */
  printed: RegExp;
}

const SMOKES: Smoke[] = [
  {
    script: 'bench',
    env: {
      BENCH_ROWS: '2000',
      BENCH_BIG_ROWS: '0',
      BENCH_SAMPLES: '5',
      BENCH_WARMUP: '1',
      BENCH_INSERT_SECONDS: '1',
      BENCH_IMPORT_ROWS: '2000',
    },
    printed: /## Row listing benchmark[\s\S]*\(d\) filter \+ sort[\s\S]*rows\/s/,
  },
  { script: 'bench:mcp', args: ['--requests', '20'], env: {}, printed: /MCP vs REST/ },
  {
    script: 'bench:jobs',
    env: { BENCH_JOBS_ROWS: '2000', BENCH_JOBS_STEP_ROWS: '1000', BENCH_JOBS_STREAMS_COUNT: '10' },
    printed: /cells\/s/,
  },
  { script: 'bench:cluster', env: { CLUSTER_BENCH_SECONDS: '3', CLUSTER_BENCH_ROWS: '200' }, printed: /requests\/s|req\/s/ },
  {
    script: 'bench:cluster',
    args: ['--galera'],
    env: { GALERA_BENCH_ROWS: '200', GALERA_BENCH_CELLS: '200', GALERA_BENCH_READS: '10' },
    printed: /3 nodes \(Galera\)[\s\S]*first successful write/,
  },
  { script: 'bench:console', env: { BENCH_BIG_ROWS: '2000', BENCH_SAMPLES: '1' }, printed: /ms/ },
  { script: 'bench:export', env: { BENCH_EXPORT_ROWS: '2000', BENCH_DIALECTS: 'sqlite,mysql' }, printed: /rows\/s/ },
  { script: 'bench:import', env: { BENCH_IMPORT_ROWS: '2000', BENCH_DIALECTS: 'sqlite,mysql' }, printed: /rows\/s/ },
  { script: 'bench:keys', env: { BENCH_KEYS_ROWS: '2000' }, printed: /cell records\/s/ },
  { script: 'bench:embedded', env: { BENCH_EMBEDDED_ROWS: '2000' }, printed: /p99/ },
  { script: 'bench:start', env: { BENCH_ROWS: '1000', BENCH_SAMPLES: '3' }, printed: /filter \+ sort, page 500/ },
  { script: 'bench:inserts', env: { BENCH_INSERT_ROWS: '160' }, printed: /### watched[\s\S]*rows\/s/ },
  ...(process.env.BENCH_SMOKE_DIRECTUS === '1'
    ? [{ script: 'bench:directus', env: { BENCH_ROWS: '500', BENCH_SEED_SINGLES: '100', BENCH_ROUNDS: '2' }, printed: /Directus/ }]
    : []),
];

/** A smoke run that takes longer than this is hung, not slow (each takes well under a minute). */
const HANG_MS = 10 * 60_000;

const ROOT = resolve(import.meta.dir, '../..');
const only = process.argv.slice(2);
const failures: string[] = [];

/** Runs one benchmark in its short mode; answers what went wrong, or null when it ran to its end. */
async function smoke(s: Smoke): Promise<string | null> {
  const proc = Bun.spawn(['bun', 'run', s.script, ...(s.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...s.env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), HANG_MS);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  if (code === 0 && s.printed.test(out)) return null;
  return `exit ${code}${code === 0 ? ', its figures were not printed' : ''}\n--- stdout (end)\n${out.slice(-3000)}\n--- stderr (end)\n${err.slice(-3000)}`;
}

for (const s of SMOKES) {
  if (only.length && !only.includes(s.script)) continue;
  const t0 = performance.now();
  process.stderr.write(`bench:smoke: ${s.script} …\n`);
  // A second try only after a first failure, which is printed whole: a benchmark that fails twice is broken.
  let problem = await smoke(s);
  if (problem) {
    process.stderr.write(`bench:smoke: ${s.script} failed once (${problem})\nbench:smoke: ${s.script}: trying again\n`);
    problem = await smoke(s);
  }
  const seconds = ((performance.now() - t0) / 1000).toFixed(0);
  if (!problem) {
    process.stderr.write(`bench:smoke: ${s.script} ran in ${seconds} s\n`);
    continue;
  }
  failures.push(s.script);
  process.stderr.write(`bench:smoke: ${s.script} FAILED after ${seconds} s (${problem})\n`);
}
if (failures.length) {
  process.stderr.write(`bench:smoke: ${failures.length} benchmark(s) broken: ${failures.join(', ')}\n`);
  process.exit(1);
}
process.stderr.write('bench:smoke: every benchmark ran\n');
