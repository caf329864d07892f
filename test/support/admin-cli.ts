import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dir, '../..');

/** Runs `bun run admin ...` as a user would, against DATABASE_URL: its exit code and its JSON answer. */
export async function admin(databaseUrl: string, ...args: string[]): Promise<{ code: number; out: any }> {
  const proc = Bun.spawn(['bun', 'run', 'admin', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return { code, out: JSON.parse(text) };
}
