import { closeSync, openSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { freePort } from '../../test/support/free-port.ts';

export type Role = 'api' | 'mcp' | 'worker';

interface Member {
  role: Role;
  index: number;
  port?: number;
  proc: Subprocess;
}

const ROOT = resolve(import.meta.dir, '../..');

export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

export const answers = (url: string) => async () => (await fetch(url)).ok;

/**
 * The service's processes of a cluster, as a deployment runs them: `app/main.ts` with SERVE=rest
 * or SERVE=mcp on a port of their own, and `app/worker.ts`; each logs to `<role>-<index>.log`.
 */
export class Members {
  private readonly all: Member[] = [];

  constructor(
    private readonly env: Record<string, string>,
    private readonly logDir: string,
    /** The environment only the first API process gets (it creates what must be made once). */
    private readonly firstApiEnv: Record<string, string>,
    /** What differs per process (on a Galera cluster, the node its DATABASE_URL lists first). */
    private readonly envOf: (role: Role, index: number) => Record<string, string> = () => ({}),
  ) {}

  /** The first API process migrates the database and creates what is made once; the rest follow together. */
  async startAll(counts: Record<Role, number>): Promise<void> {
    await this.ready(await this.add('api', 0));
    const rest: Omit<Member, 'proc'>[] = [];
    for (let i = 1; i < counts.api; i++) rest.push(await this.add('api', i));
    for (let i = 0; i < counts.mcp; i++) rest.push(await this.add('mcp', i));
    for (let i = 0; i < counts.worker; i++) rest.push(await this.add('worker', i));
    await Promise.all(rest.map((m) => this.ready(m)));
  }

  portsOf(role: Role): number[] {
    return this.all.filter((m) => m.role === role).map((m) => m.port as number);
  }

  /** SIGTERM to one process, wait for its exit, start it again on the same port. */
  async restart(role: Role, index: number): Promise<{ exitCode: number | null; downMs: number }> {
    const m = this.all.find((x) => x.role === role && x.index === index);
    if (!m) throw new Error(`no ${role}-${index} in this cluster`);
    const signalled = performance.now();
    m.proc.kill('SIGTERM');
    const exitCode = await m.proc.exited;
    m.proc = this.launch(m);
    await this.ready(m);
    return { exitCode, downMs: performance.now() - signalled };
  }

  /** SIGTERM to every process (15 s to finish what it holds), then SIGKILL. */
  async stop(): Promise<void> {
    await Promise.all(
      this.all.map(async (m) => {
        m.proc.kill('SIGTERM');
        await Promise.race([m.proc.exited, Bun.sleep(15_000)]);
        m.proc.kill('SIGKILL');
      }),
    );
  }

  private async add(role: Role, index: number): Promise<Omit<Member, 'proc'>> {
    const m = { role, index, port: role === 'worker' ? undefined : await freePort() };
    this.all.push({ ...m, proc: this.launch(m) });
    return m;
  }

  private launch(m: Omit<Member, 'proc'>): Subprocess {
    const env: Record<string, string> = { ...this.env, ...this.envOf(m.role, m.index) };
    if (m.role === 'api') Object.assign(env, { SERVE: 'rest', PORT: String(m.port) });
    if (m.role === 'mcp') Object.assign(env, { SERVE: 'mcp', MCP_PORT: String(m.port) });
    if (m.role === 'api' && m.index === 0) Object.assign(env, this.firstApiEnv);
    const script = m.role === 'worker' ? 'app/worker.ts' : 'app/main.ts';
    const log = openSync(join(this.logDir, `${m.role}-${m.index}.log`), 'a');
    try {
      return Bun.spawn(['bun', join(ROOT, script)], { cwd: ROOT, env, stdin: 'ignore', stdout: log, stderr: log });
    } finally {
      closeSync(log);
    }
  }

  private async ready(m: Omit<Member, 'proc'>): Promise<void> {
    if (m.role === 'worker') return Bun.sleep(1_000); // no port: it is up once its consumer runs
    await waitUntil(`${m.role}-${m.index} ready`, answers(`http://127.0.0.1:${m.port}/ready`));
  }
}
