import { expect, test } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const MAIN = resolve(import.meta.dir, '../app/main.ts');

test('`bun run start` with no configuration serves REST on SQLite created under ./data', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'wfs-start-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  // Only PORT is set (to avoid clashing with a local service); everything else is the default.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, PORT: String(port) };
  const proc = Bun.spawn(['bun', MAIN], { cwd, env, stdout: 'pipe', stderr: 'pipe' });
  try {
    const reader = proc.stdout.getReader();
    let out = '';
    const deadline = Date.now() + 15_000;
    while (!out.includes('REST API listening') && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
    expect(out).toContain(`http://127.0.0.1:${port}/api/enterprise`);
    expect(existsSync(join(cwd, 'data/workflow.sqlite'))).toBe(true);
    const res = await fetch(`http://127.0.0.1:${port}/api/enterprise/project-builders`);
    expect(res.status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/api/enterprise/docs/json`)).status).toBe(200);
  } finally {
    proc.kill('SIGTERM');
    expect(await proc.exited).toBe(0); // graceful shutdown
    rmSync(cwd, { recursive: true, force: true });
  }
});
