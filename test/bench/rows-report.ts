import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEEP_PAGE_MAX_RATIO } from './rows-cases.ts';
import type { Latency } from './measure.ts';
import type { CaseResult } from './rows-listing.ts';
import type { DialectResult, Settings } from './rows-suite.ts';
import type { SeedResult } from './seed.ts';

/** Markdown tables for the README, and the same figures (plus SQL and plans) as JSON. */

export const TARGETS = { insertsPerSecond: 1000, bigFilterSortMs: 250 } as const;

export interface BenchReport {
  startedAt: string;
  seconds: number;
  settings: Settings;
  machine: { bun: string; platform: string; cpus: number; loadAvgStart: number[]; loadAvgEnd: number[] };
  dialects: DialectResult[];
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const pair = (l: Latency | null) => (l ? `${ms(l.p50)} / ${ms(l.p95)}` : '–');
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
const name = (d: DialectResult) => (d.dialect === 'mysql' ? 'MariaDB' : 'SQLite');

/** ✅ p95 within target, ⚠️ only p50 within, ❌ p50 over. */
function verdict(l: Latency, target: number): string {
  return l.p95 <= target ? '✅' : l.p50 <= target ? '⚠️' : '❌';
}

/** Samples per layer: one number when all three layers got the same count. */
function samples(r: CaseResult): string {
  const n = [r.sql, r.inProcess, r.http, r.httpAfterWrite, r.httpAfterOtherWrite].flatMap((l) => (l ? [l.samples] : []));
  return n.every((x) => x === n[0]) ? String(n[0]) : n.join('/');
}

/**
 * Every case's HTTP p50 over the unfiltered, unsorted page 1 of the same table (the `a` case): a
 * sorted or deep page should cost about what page 1 costs, however the rows arrived (target ≤ 2×,
 * ≤ 3× on the 1M-row table).
 */
function pageOneRatio(r: CaseResult, all: CaseResult[], max: number): string {
  const first = all.find((x) => x.case === 'a' && x.page === 1);
  if (!first || r === first) return '';
  const ratio = r.http.p50 / first.http.p50;
  return ` · ${ratio.toFixed(2)}× p1 ${ratio <= max ? '✅' : '❌'}`;
}

function caseTable(rows: CaseResult[], maxRatio = DEEP_PAGE_MAX_RATIO): string[] {
  const out = [
    '| Query | Page | Rows | total_rows | Bare SQL p50 / p95 | In-process p50 / p95 | HTTP p50 / p95 | HTTP after own insert | HTTP after another process wrote | n | Target (HTTP / own / other) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const marks = [r.http, r.httpAfterWrite, r.httpAfterOtherWrite].flatMap((l) => (l ? [verdict(l, r.targetMs)] : [])).join(' / ');
    out.push(
      `| ${r.label} | ${r.page} | ${r.returned} | ${int(r.totalRows)} | ${pair(r.sql)} | ${pair(r.inProcess)} | ${pair(r.http)} | ${pair(r.httpAfterWrite)} | ${pair(r.httpAfterOtherWrite)} | ${samples(r)} | ≤${r.targetMs} ms ${marks}${pageOneRatio(r, rows, maxRatio)} |`,
    );
  }
  return out;
}

/** How the load went: single POSTs in waves of 16 (their rate and latency per POST), after any batches. */
function seedHow(seed: SeedResult): string {
  const one = seed.singles;
  if (!one) return `POST rows/batch, ${int(seed.rowsPerSecond)} rows/s`;
  const batched = seed.rows - one.rows;
  const before = batched > 0 ? `${int(batched)} rows by POST rows/batch, then ` : '';
  return `${before}${int(one.rows)} single POST rows in waves of 16: ${int(one.rowsPerSecond)} rows/s, p50 ${ms(one.p50Ms)} ms, p95 ${ms(one.p95Ms)} ms per POST`;
}

/** A sorted or deep page of the 1M-row table: at most this many times its page 1. */
const BIG_PAGE_MAX_RATIO = 3;

export function markdown(report: BenchReport): string {
  const s = report.settings;
  const out: string[] = [
    `## Row listing benchmark (${report.startedAt.slice(0, 10)})`,
    '',
    `${int(s.rows)}-row project, 10 input columns, page_size 50, latencies in ms. n = samples per layer: ${s.samples} after ${s.warmup} warm-up calls,`,
    `fewer (at least 15) when a query would take over ${s.budgetSeconds} s per layer. Bare SQL = the statements of SqlRowRepo.page via Kysely \`sql\`;`,
    'in-process = `kernel.storage.rows.page(...)`; HTTP = GET /projects/{id}/rows with fetch, body parsed. Bare SQL counts every',
    'filtered total and skips OFFSET rows every time; the repository remembers totals and deep-page anchors while the project is',
    'unchanged, so in-process and HTTP show the repeated request. "After own insert": the first request after this process inserted',
    'a row (totals follow own writes; anchors of sorted listings are dropped). "After another process wrote": nothing remembered is used.',
    `Bun ${report.machine.bun}, ${report.machine.platform}, ${report.machine.cpus} CPUs, load average ${load(report.machine.loadAvgStart)} at start, ${load(report.machine.loadAvgEnd)} at end;`,
    `service and client in one process; the workspace's plan has no request rate limit. Whole run ${report.seconds.toFixed(0)} s.`,
    '',
  ];
  for (const d of report.dialects) {
    out.push(
      `### ${name(d)}: ${d.where}`,
      '',
      `Seeded ${int(d.seed.rows)} rows in ${d.seed.seconds.toFixed(1)} s over HTTP (${seedHow(d.seed)}; no ANALYZE after).`,
      '',
    );
    out.push(...caseTable(d.cases), '');
    const i = d.inserts;
    out.push(
      `POST /rows, one row each, concurrency ${i.concurrency}, ${i.seconds.toFixed(1)} s: **${int(i.perSecond)} rows/s** ` +
        `(p50 ${ms(i.latency.p50)} ms, p95 ${ms(i.latency.p95)} ms, ${i.failed} failed); target ≥${int(TARGETS.insertsPerSecond)} rows/s ${i.perSecond >= TARGETS.insertsPerSecond ? '✅' : '❌'}. ` +
        `Same inserts in-process (RowRepo.insert, no HTTP): ${int(d.insertsInProcess.perSecond)} rows/s (p50 ${ms(d.insertsInProcess.latency.p50)} ms).`,
      '',
    );
    if (d.big) {
      const how = s.bigSeed === 'copy' ? 'server-side copy of the seeded rows' : 'POST rows/batch over HTTP';
      out.push(
        `Grown to ${int(d.big.cases[0]?.projectRows ?? 0)} rows in ${d.big.seed.seconds.toFixed(1)} s (${how}, ${int(d.big.seed.rowsPerSecond)} rows/s); at most ${s.bigSamples} samples:`,
        '',
      );
      out.push(
        ...caseTable(
          d.big.cases.map((r) => ({ ...r, targetMs: TARGETS.bigFilterSortMs })),
          BIG_PAGE_MAX_RATIO,
        ),
        '',
      );
    }
    for (const w of d.warnings) out.push(`> warning: ${w}`);
    if (d.warnings.length) out.push('');
  }
  out.push(
    'Target ✅ = HTTP p95 within target, ⚠️ = only p50 within, ❌ = p50 over; "× p1" = HTTP p50 over that of page 1 with no filter or sort on the same table (target ≤2×; ≤3× at 1M rows).',
    'Targets are the MariaDB ones; SQLite is shown against the same numbers. A filter matching 10% of 100,000 rows has 200 pages: its',
    'page 500 is past the end (0 rows, total_rows still counted), so its last page is measured too.',
  );
  return out.join('\n');
}

/** Plans of every query that missed its target (HTTP p50, repeated or after a write), for stderr / the issue. */
export function slowPlans(report: BenchReport): string {
  const out: string[] = [];
  for (const d of report.dialects) {
    const all = [...d.cases, ...(d.big?.cases.map((r) => ({ ...r, targetMs: TARGETS.bigFilterSortMs })) ?? [])];
    for (const r of all) {
      const after = `, after own insert ${ms(r.httpAfterWrite?.p50 ?? 0)} ms, after another process wrote ${ms(r.httpAfterOtherWrite?.p50 ?? 0)} ms`;
      if (Math.max(r.http.p50, r.httpAfterWrite?.p50 ?? 0, r.httpAfterOtherWrite?.p50 ?? 0) <= r.targetMs) continue;
      out.push(
        `--- ${name(d)} ${r.label}, page ${r.page}, ${int(r.projectRows)} rows: HTTP p50 ${ms(r.http.p50)} ms${after}, bare SQL p50 ${ms(r.sql.p50)} ms (target ${r.targetMs} ms)`,
      );
      out.push(r.statement, '', r.plan, '');
    }
  }
  return out.join('\n');
}

export function writeJson(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
