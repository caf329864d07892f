import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The console's API types come from the contract (docs/console.md): `bun run console:types` builds
 * the OpenAPI document in process and generates console/src/api-types.d.ts and api-enums.ts from it.
 * Generated again here into a temporary folder, they must be the checked-in files byte for byte — a
 * change of the contract without the command fails here, and the console's type check says what it
 * breaks once the command has run.
 */

const ROOT = resolve(import.meta.dir, '..');
const GENERATED = ['api-types.d.ts', 'api-enums.ts'];

/** The first line where two texts differ, as "line N: checked in … / generated …". */
function firstDifference(checkedIn: string, generated: string): string {
  const a = checkedIn.split('\n');
  const b = generated.split('\n');
  const at = a.findIndex((line, i) => line !== b[i]);
  const i = at === -1 ? a.length : at;
  return `line ${i + 1}: checked in ${JSON.stringify(a[i] ?? '(end of file)')}, generated ${JSON.stringify(b[i] ?? '(end of file)')}`;
}

describe('the console’s API types', () => {
  test('are what bun run console:types generates from the OpenAPI document now', async () => {
    const out = mkdtempSync(join(tmpdir(), 'console-types-'));
    try {
      const proc = Bun.spawn(['bun', 'run', 'scripts/console-types.ts', '--out', out], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`bun run console:types failed (${code}):\n${stdout}${stderr}`);
      const stale = GENERATED.flatMap((name) => {
        const checkedIn = readFileSync(join(ROOT, 'console/src', name), 'utf8');
        const generated = readFileSync(join(out, name), 'utf8');
        return checkedIn === generated ? [] : [`console/src/${name} (${firstDifference(checkedIn, generated)})`];
      });
      if (stale.length) {
        throw new Error(
          `The console's API types are not what the OpenAPI document gives now: run \`bun run console:types\` and commit the result.\n` +
            `Out of date: ${stale.join('; ')}`,
        );
      }
      expect(stale).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
