import { type Subprocess, spawn, spawnSync } from 'bun';
import { existsSync, mkdirSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/free-port.ts';
import { companyValues } from './rows-dataset.ts';

/**
 * Directus, the peer of the side-by-side benchmark (`bun run bench:directus`): installed from the
 * npm registry into its own folder on first use (≈730 MB, never a dependency of the service), run
 * with Node on a database of the same MariaDB, holding the same companies in a collection of typed
 * columns, with its defaults (no cache, no extra index).
 */
export const DIRECTUS_VERSION = process.env.DIRECTUS_VERSION ?? '12.3.1';
const TOKEN = 'bench-directus-admin-token-0123456789';
const COLLECTION = 'companies';

export interface DirectusPeer {
  url: string;
  /** GET /items/companies?<query>, counting the matches (`meta=filter_count`): ids and the count. */
  list(query: string): Promise<{ ids: number[]; count: number }>;
  insert(items: Record<string, unknown>[]): Promise<void>;
  stop(): Promise<void>;
}

/** The npm install of Directus in `dir`, made on first use. */
export function ensureDirectus(dir: string): string {
  const cli = join(dir, 'node_modules', 'directus', 'cli.js');
  if (existsSync(cli)) return cli;
  mkdirSync(dir, { recursive: true });
  process.stderr.write(`Installing directus@${DIRECTUS_VERSION} into ${dir} from the npm registry (once, ≈3 min)…\n`);
  const npm = spawnSync(['npm', 'install', '--prefix', dir, `directus@${DIRECTUS_VERSION}`, '--no-audit', '--no-fund'], {
    stdout: 'inherit',
    stderr: 'inherit',
  });
  if (npm.exitCode !== 0 || !existsSync(cli)) throw new Error(`npm install directus@${DIRECTUS_VERSION} failed (exit ${npm.exitCode})`);
  return cli;
}

/** The same ten values as the service's bench rows, as one Directus item. */
export function directusItem(i: number): Record<string, unknown> {
  const [name, domain, city, industry, employees, revenue, founded, rating, description, linkedin] = companyValues(i);
  return { name, domain, city, industry, employees, revenue, founded, rating, description, linkedin };
}

const FIELDS = [
  ['name', 'string'],
  ['domain', 'string'],
  ['city', 'string'],
  ['industry', 'string'],
  ['employees', 'integer'],
  ['revenue', 'bigInteger'],
  ['founded', 'integer'],
  ['rating', 'float'],
  ['description', 'text'],
  ['linkedin', 'string'],
] as const;

async function call(url: string, init: RequestInit = {}): Promise<unknown> {
  const res = await fetch(url, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`Directus ${init.method ?? 'GET'} ${new URL(url).pathname} answered ${res.status}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

export async function startDirectus(options: { cli: string; databaseUrl: string; logPath: string }): Promise<DirectusPeer> {
  const db = new URL(options.databaseUrl);
  const port = freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    DB_CLIENT: 'mysql',
    DB_HOST: db.hostname,
    DB_PORT: db.port,
    DB_DATABASE: db.pathname.slice(1),
    DB_USER: decodeURIComponent(db.username),
    DB_PASSWORD: decodeURIComponent(db.password),
    SECRET: 'bench-directus-secret-0123456789abcdef',
    ADMIN_EMAIL: 'admin@example.com',
    ADMIN_PASSWORD: 'bench-admin-password',
    ADMIN_TOKEN: TOKEN,
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    TELEMETRY: 'false',
    CACHE_ENABLED: 'false',
    RATE_LIMITER_ENABLED: 'false',
    LOG_LEVEL: 'warn',
  };
  const cwd = join(options.cli, '..', '..', '..');
  const log = openSync(options.logPath, 'a');
  let proc: Subprocess | undefined;
  try {
    const boot = spawnSync(['node', options.cli, 'bootstrap'], { cwd, env, stdout: log, stderr: log });
    if (boot.exitCode !== 0) throw new Error(`directus bootstrap failed (exit ${boot.exitCode}); see ${options.logPath}`);
    proc = spawn(['node', options.cli, 'start'], { cwd, env, stdin: 'ignore', stdout: log, stderr: log });
  } finally {
    closeSync(log);
  }
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    proc?.kill('SIGTERM');
    if (proc) await Promise.race([proc.exited, Bun.sleep(10_000)]);
    proc?.kill('SIGKILL');
  };
  try {
    const deadline = Date.now() + 60_000;
    while (
      !(await fetch(`${url}/server/ping`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (proc.exitCode !== null) throw new Error(`directus exited with code ${proc.exitCode}; see ${options.logPath}`);
      if (Date.now() > deadline) throw new Error(`directus did not answer within 60 s; see ${options.logPath}`);
      await Bun.sleep(250);
    }
    await call(`${url}/collections`, {
      method: 'POST',
      body: JSON.stringify({
        collection: COLLECTION,
        meta: {},
        schema: {},
        fields: [
          { field: 'id', type: 'integer', meta: { hidden: true }, schema: { is_primary_key: true, has_auto_increment: true } },
          ...FIELDS.map(([field, type]) => ({ field, type, schema: { is_nullable: true } })),
        ],
      }),
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    url,
    async list(query) {
      const body = (await call(`${url}/items/${COLLECTION}?${query}&meta=filter_count`)) as {
        data: { id: number }[];
        meta: { filter_count: number };
      };
      return { ids: body.data.map((d) => d.id), count: Number(body.meta.filter_count) };
    },
    async insert(items) {
      await call(`${url}/items/${COLLECTION}?fields=id`, { method: 'POST', body: JSON.stringify(items.length === 1 ? items[0] : items) });
    },
    stop,
  };
}
