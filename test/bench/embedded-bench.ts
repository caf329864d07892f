/**
 * The embedded default under load (issue "Correctness first", item 4): `bun run start` on SQLite,
 * as a user runs it, imports a CSV of BENCH_EMBEDDED_ROWS records (default 100,000) while another
 * client lists projects one request after another. Prints the listing's latency (p50, p90, p99,
 * max) and the import time, with the job thread (JOB_THREAD=1, the default) and without it
 * (JOB_THREAD=0: jobs on the thread that answers requests), in the same run.
 *
 *   bun run bench:embedded
 *   BENCH_EMBEDDED_ROWS=20000 bun run bench:embedded
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../support/free-port.ts';
import { percentile } from '../support/latency-probe.ts';

const ROWS = Number(process.env.BENCH_EMBEDDED_ROWS ?? 100_000);
const KEY = 'bench-embedded-key';
const ROOT = resolve(import.meta.dir, '../..');

function csv(rows: number): string {
  const lines = ['Name,Website,City,Employees'];
  for (let i = 1; i <= rows; i++)
    lines.push(`Company ${i},https://company${i}.example,${['Lyon', 'Paris', 'Gent'][i % 3]},${(i * 37) % 5000}`);
  return `${lines.join('\n')}\n`;
}

interface Figures {
  mode: string;
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  importSeconds: number;
}

async function measure(jobThread: '0' | '1', body: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'wfs-bench-embedded-'));
  const port = await freePort();
  const proc = Bun.spawn(['bun', 'app/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: `sqlite:${join(dir, 'bench.sqlite')}`,
      PORT: String(port),
      BOOTSTRAP_API_KEY: KEY,
      JOB_THREAD: jobThread,
      LOG_LEVEL: 'warn',
      // The probe asks far more often than a plan's per-key rate allows.
      PLANS_JSON: JSON.stringify({ pro: { requestsPerMinute: null } }),
    },
    stdout: 'ignore',
    stderr: 'inherit',
  });
  const base = `http://127.0.0.1:${port}/api/enterprise`;
  const headers = { 'service-api-key': KEY, 'content-type': 'application/json' };
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/ready`).catch(() => null);
      if (up?.ok) break;
      if (i > 600) throw new Error('the service did not start');
      await Bun.sleep(50);
    }
    // Warm up the listing.
    for (let i = 0; i < 50; i++) await (await fetch(`${base}/projects`, { headers })).arrayBuffer();
    const t0 = performance.now();
    const made = await fetch(`${base}/projects`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ builder_id: 'csv_import_builder', form_data: { csv_text: body } }),
    });
    if (made.status !== 201) throw new Error(`POST /projects answered ${made.status}`);
    const { project_id } = (await made.json()) as { project_id: string };
    const samples: number[] = [];
    let done = false;
    let polled = 0;
    while (!done) {
      const s = performance.now();
      const r = await fetch(`${base}/projects`, { headers });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`GET /projects answered ${r.status}`);
      samples.push(performance.now() - s);
      if (++polled % 20 === 0) {
        const p = (await (await fetch(`${base}/projects/${project_id}`, { headers })).json()) as { builder_status: { type: string } };
        done = !['queued', 'running'].includes(p.builder_status.type);
      }
    }
    const importSeconds = (performance.now() - t0) / 1000;
    return {
      mode: jobThread === '1' ? 'job thread (default)' : 'same thread (JOB_THREAD=0)',
      samples: samples.length,
      p50: percentile(samples, 50),
      p90: percentile(samples, 90),
      p99: percentile(samples, 99),
      max: Math.max(...samples),
      importSeconds,
    };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const body = csv(ROWS);
console.log(`bench:embedded — GET /projects while a ${ROWS.toLocaleString('en-US')}-row CSV import runs, bun run start on SQLite`);
const rows: Figures[] = [];
for (const mode of ['1', '0'] as const) rows.push(await measure(mode, body));
const ms = (n: number) => n.toFixed(1).padStart(7);
console.log('| mode                          | requests |  p50 ms |  p90 ms |  p99 ms |  max ms | import s |');
console.log('| ----------------------------- | -------: | ------: | ------: | ------: | ------: | -------: |');
for (const r of rows) {
  console.log(
    `| ${r.mode.padEnd(29)} | ${String(r.samples).padStart(8)} | ${ms(r.p50)} | ${ms(r.p90)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.importSeconds.toFixed(1).padStart(8)} |`,
  );
}
