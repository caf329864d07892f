import { parseArgs } from 'node:util';
import { openStorage } from '../../adapters/storage/sql-storage.ts';
import { openStatsBoard } from '../../adapters/metrics/worker-stats-boards.ts';
import { openQueue } from '../../adapters/queue/open-queue.ts';
import { type Config, loadConfig } from '../config.ts';
import { setLogLevel } from '../log.ts';
import { configurePlans, isKnownPlan, planNames } from '../plans.ts';
import { issueApiKey, keyPrefix } from '../services/api-keys.ts';
import type { Storage } from '../storage.ts';

/**
 * `bun run admin <command> [--flags]`: workspace and key administration on DATABASE_URL.
 * Prints one JSON object; exits 1 with {"error": ...} on a mistake.
 */
const USAGE = `usage: bun run admin <command>
  workspace:create --name N [--plan free|pro] [--credits N]
  key:create --workspace ID
  key:revoke --key PREFIX
  credits:grant --workspace ID --amount N
  credits:ledger --workspace ID [--limit N]
  credits:usage --workspace ID [--days N] [--csv]
  jobs:stats                      (needs REDIS_URL)
  jobs:dead [--limit N]
  jobs:retry --id JOB_ID | --all
  plan:set --workspace ID --plan P
  oauth:link --workspace ID --subject SUB [--issuer URL]   (MCP OAuth; issuer defaults to OAUTH_ISSUER)`;

class UsageError extends Error {}

/** An answer printed as is (CSV) rather than as JSON. */
export class CsvText {
  constructor(readonly text: string) {}
}

const csvField = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

function need(values: Record<string, string | boolean | undefined>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required\n${USAGE}`);
  return v;
}

function amount(raw: string, name: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be an integer, got "${raw}"`);
  return n;
}

function plan(raw: string): string {
  if (!isKnownPlan(raw)) throw new UsageError(`--plan must be one of ${planNames().join(', ')}, got "${raw}"`);
  return raw;
}

async function workspaceOrFail(storage: Storage, id: string) {
  const ws = await storage.workspaces.get(id);
  if (!ws) throw new UsageError(`no workspace ${id}`);
  return ws;
}

/** The job commands work on the shared Redis queue; the in-process queue lives inside the server. */
async function jobsCommand(command: string, values: Record<string, string | boolean | undefined>, config: Config): Promise<unknown> {
  if (!config.redisUrl) {
    throw new UsageError(`${command} needs REDIS_URL: without it the queue lives inside the server process (see GET /metrics there)`);
  }
  const queue = await openQueue(config.redisUrl, config.queue);
  const board = openStatsBoard(config.redisUrl, config.queue.prefix ?? 'wfs');
  try {
    switch (command) {
      case 'jobs:stats': {
        const { waiting, delayed, pending, dead } = await queue.stats();
        const workers = (await board.all()).map(({ workerId, running, processed, failed, deadLettered, latency }) => ({
          worker: workerId,
          running,
          processed,
          failed,
          dead_lettered: deadLettered,
          mean_latency_ms: latency.count ? Math.round(latency.sumMs / latency.count) : null,
        }));
        return { waiting, delayed, pending, dead, workers };
      }
      case 'jobs:dead':
        return { dead: await queue.listDead(values.limit ? amount(String(values.limit), 'limit') : 50) };
      default: {
        const id = values.id === true || values.all ? 'all' : need(values, 'id');
        return { retried: await queue.retryDead(id) };
      }
    }
  } finally {
    await queue.close();
    await board.close();
  }
}

export async function runAdmin(argv: string[], storage: Storage, config: Config = loadConfig()): Promise<unknown> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      workspace: { type: 'string' },
      key: { type: 'string' },
      amount: { type: 'string' },
      subject: { type: 'string' },
      issuer: { type: 'string' },
      limit: { type: 'string' },
      days: { type: 'string' },
      csv: { type: 'boolean' },
      id: { type: 'string' },
      all: { type: 'boolean' },
    },
    strict: true,
  });
  const repo = storage.workspaces;
  if (command === 'jobs:stats' || command === 'jobs:dead' || command === 'jobs:retry') return jobsCommand(command, values, config);
  switch (command) {
    case 'workspace:create': {
      const ws = await repo.create({ name: need(values, 'name'), plan: plan(values.plan ?? 'pro') });
      const credits = values.credits ? amount(values.credits, 'credits') : 0;
      if (credits) await storage.credits.grant(ws.id, credits, { note: 'workspace:create' });
      const { api_key, prefix } = await issueApiKey(repo, ws.id);
      return { workspace_id: ws.id, name: ws.name, plan: ws.plan, credits, api_key, key_prefix: prefix };
    }
    case 'key:create': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const { api_key, prefix } = await issueApiKey(repo, ws.id);
      return { workspace_id: ws.id, api_key, key_prefix: prefix };
    }
    case 'key:revoke': {
      const prefix = keyPrefix(need(values, 'key'));
      const revoked = await repo.revokeKey(prefix);
      if (!revoked) throw new UsageError(`no live key with prefix ${prefix}`);
      return { revoked: true, key_prefix: prefix };
    }
    case 'credits:grant': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const balance = await storage.credits.grant(ws.id, amount(need(values, 'amount'), 'amount'), { note: 'credits:grant' });
      return { workspace_id: ws.id, balance };
    }
    case 'credits:ledger': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const entries = await storage.credits.entries(ws.id, values.limit ? amount(values.limit, 'limit') : 100);
      return {
        workspace_id: ws.id,
        balance: await storage.credits.balance(ws.id),
        entries: entries.map((e) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() })),
      };
    }
    case 'credits:usage': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const days = values.days ? amount(values.days, 'days') : 30;
      const usage = await storage.credits.usage(ws.id, Date.now() - days * 86_400_000);
      if (!values.csv) return { workspace_id: ws.id, days, usage };
      // CSV for spreadsheets: one line per plugin.
      return new CsvText(['plugin_id,credits', ...usage.map((u) => `${csvField(u.plugin_id)},${u.credits}`)].join('\n'));
    }
    case 'plan:set': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const p = plan(need(values, 'plan'));
      await repo.setPlan(ws.id, p);
      return { workspace_id: ws.id, plan: p };
    }
    case 'oauth:link': {
      // An OAuth access token without a workspace_id claim reaches the workspace its subject is linked to.
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const issuer = values.issuer ?? loadConfig().oauthIssuer;
      if (!issuer) throw new UsageError('--issuer is required when OAUTH_ISSUER is not set');
      const subject = need(values, 'subject');
      await storage.oauthIdentities.link({ issuer, subject, workspaceId: ws.id });
      return { workspace_id: ws.id, issuer, subject, linked: true };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"\n${USAGE}` : USAGE);
  }
}

if (import.meta.main) {
  setLogLevel('warn');
  const config = loadConfig();
  configurePlans(config.plans);
  const storage = await openStorage(config.databaseUrl);
  let code = 0;
  try {
    const answer = await runAdmin(process.argv.slice(2), storage, config);
    console.log(answer instanceof CsvText ? answer.text : JSON.stringify(answer, null, 2));
  } catch (e) {
    console.log(JSON.stringify({ error: (e as Error).message }));
    code = 1;
  } finally {
    await storage.close();
  }
  process.exit(code);
}
