import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * The document as third-party tools judge it (docs/api.md): Redocly's `recommended` rules and
 * Spectral's `spectral:oas` report no error and no warning. Both run offline: telemetry and update
 * checks off, the document a local file.
 */

const BIN = resolve(import.meta.dir, '../node_modules/.bin');
const OFFLINE = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true', NO_COLOR: '1' };

async function run(cmd: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(cmd, { cwd, env: OFFLINE, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** A linter's JSON report, or a failure that shows what it said instead. */
function report(text: string, out: { stdout: string; stderr: string }, tool: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${tool} wrote no JSON report:\n${out.stdout}\n${out.stderr}`);
  }
}

describe('the OpenAPI document passes the linters', () => {
  let t: TestService;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    t = await startTestService('sqlite');
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, await (await fetch(`${t.url}/docs/json`)).text());
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('redocly lint (recommended): no error, no warning', async () => {
    const out = await run([`${BIN}/redocly`, 'lint', '--extends=recommended', '--format=json', file], dir);
    const { problems, totals } = report(out.stdout, out, 'redocly');
    expect(problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)).toEqual([]);
    expect(totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 30_000);

  test('spectral lint (spectral:oas): no error, no warning', async () => {
    const ruleset = join(dir, '.spectral.json');
    writeFileSync(ruleset, JSON.stringify({ extends: ['spectral:oas'] }));
    const output = join(dir, 'spectral.json');
    const out = await run(
      [`${BIN}/spectral`, 'lint', '--ruleset', ruleset, '--format', 'json', '--output', output, '--fail-severity', 'hint', file],
      dir,
    );
    const results = report(
      await Bun.file(output)
        .text()
        .catch(() => ''),
      out,
      'spectral',
    );
    // Severity 0 is an error, 1 a warning, 2 information, 3 a hint.
    expect(results.map((r: any) => `${r.severity} ${r.code}: ${r.message} at ${r.path.join('.')}`)).toEqual([]);
    expect(out.code).toBe(0);
  }, 30_000);
});
