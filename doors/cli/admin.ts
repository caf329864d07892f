import { parseArgs } from 'node:util';
import { openStorage } from '../../adapters/storage/sql-storage.ts';
import { openStatsBoard } from '../../adapters/metrics/worker-stats-boards.ts';
import { openQueue } from '../../adapters/queue/open-queue.ts';
import { type Config, loadConfig } from '../../core/config.ts';
import { SigningKeys } from '../../core/identity/oauth/signing-keys.ts';
import { setLogLevel } from '../../core/log.ts';
import { configurePlans, isKnownPlan, planNames } from '../../core/plans.ts';
import { BalanceOverflowError, MAX_BALANCE } from '../../core/credits/credit-types.ts';
import { createUser, setPassword } from '../../core/identity/accounts.ts';
import { hashApiKey, isKeyPrefix, issueApiKey, keyPrefix } from '../../core/identity/api-keys.ts';
import type { Storage } from '../../core/ports/storage.ts';

/**
 * `bun run admin <command> [--flags]`: workspace and key administration on DATABASE_URL.
 * Prints one JSON object; exits 1 with {"error": ...} on a mistake.
 */
/** Credits of a workspace made by workspace:create without --credits (BOOTSTRAP_CREDITS' default too). */
export const DEFAULT_WORKSPACE_CREDITS = 1000;

/** Longest adjustment reason: it is kept in the ledger's note (varchar(255)). */
const MAX_REASON_CHARS = 255;

const USAGE = `usage: bun run admin <command>
  workspace:create --name N [--plan free|pro] [--credits N]   (credits default ${DEFAULT_WORKSPACE_CREDITS})
  key:create --workspace ID [--monthly-credits N]   (N > 0: the most the key may spend per calendar month, UTC)
  key:cap --key PREFIX --monthly-credits N|none      (sets or removes a live key's monthly cap)
  key:list --workspace ID
  key:revoke --key KEY_OR_PREFIX
  credits:grant --workspace ID --amount N           (N > 0)
  credits:adjust --workspace ID --amount N --reason TEXT   (N may be negative: --amount=-50)
  credits:ledger --workspace ID [--limit N]
  credits:usage --workspace ID [--days N] [--csv]
  jobs:stats                      (needs REDIS_URL)
  jobs:dead [--limit N]
  jobs:retry --id JOB_ID | --all
  plan:set --workspace ID --plan P
  oauth:link --workspace ID --subject SUB [--issuer URL]   (MCP OAuth; issuer defaults to OAUTH_ISSUER)
  oauth:rotate-keys               (a new signing key for access tokens; the old ones verify for another hour)
  user:create --email E --password P [--workspace ID] [--role owner|admin|member]
                                  (without --workspace: a new workspace of their own, as owner)
  user:password --email E --password P   (also signs them out everywhere)`;

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

/**
 * A whole number written in digits (an optional leading minus; no exponent, fraction, sign `+`,
 * hex or blanks), within [min, max] and a safe integer. `allowed` says what is accepted, for the error.
 */
function wholeNumber(raw: string, name: string, min: number, max: number, allowed: string, exceptZero = false): number {
  const n = /^-?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max || (exceptZero && n === 0)) {
    throw new UsageError(`--${name} must be ${allowed}, got "${raw}"`);
  }
  return n;
}

const count = (raw: string, name: string) => wholeNumber(raw, name, 1, 1_000_000, 'a whole number from 1 to 1000000');
const POSITIVE_CREDITS = `a whole number of credits from 1 to ${MAX_BALANCE}`;

/**
 * parseArgs takes `--amount=-5` but reads `--amount -5` as a missing value; numbers may be negative
 * here (credits:adjust), so a flag followed by a negative number is joined into the `=` form.
 */
function joinNegativeValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (/^--[a-z-]+$/.test(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** A key's monthly cap: a positive whole number, or `none` to remove it. */
function monthlyCap(raw: string): number | null {
  if (raw === 'none') return null;
  return wholeNumber(raw, 'monthly-credits', 1, MAX_BALANCE, `${POSITIVE_CREDITS}, or none`);
}

/** Grants, turning "past the largest balance" into the operator's error. */
async function grantOrFail(storage: Storage, workspaceId: string, credits: number, note: string): Promise<number> {
  try {
    return await storage.credits.grant(workspaceId, credits, { note });
  } catch (e) {
    if (e instanceof BalanceOverflowError) throw new UsageError(`refused: ${e.message}`);
    throw e;
  }
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
        return { dead: await queue.listDead(values.limit ? count(String(values.limit), 'limit') : 50) };
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
    args: joinNegativeValues(rest),
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      workspace: { type: 'string' },
      key: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
      subject: { type: 'string' },
      issuer: { type: 'string' },
      limit: { type: 'string' },
      days: { type: 'string' },
      csv: { type: 'boolean' },
      id: { type: 'string' },
      all: { type: 'boolean' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      'monthly-credits': { type: 'string' },
    },
    strict: true,
  });
  const repo = storage.workspaces;
  if (command === 'jobs:stats' || command === 'jobs:dead' || command === 'jobs:retry') return jobsCommand(command, values, config);
  switch (command) {
    case 'workspace:create': {
      const name = need(values, 'name');
      const p = plan(values.plan ?? 'pro');
      // Enough to try the README walkthrough with the new key; --credits 0 gives none.
      const credits =
        values.credits === undefined
          ? DEFAULT_WORKSPACE_CREDITS
          : wholeNumber(values.credits, 'credits', 0, MAX_BALANCE, `a whole number of credits from 0 to ${MAX_BALANCE}`);
      const ws = await repo.create({ name, plan: p });
      if (credits > 0) await storage.credits.grant(ws.id, credits, { note: 'workspace:create' });
      const { api_key, prefix } = await issueApiKey(repo, ws.id);
      return { workspace_id: ws.id, name: ws.name, plan: ws.plan, credits, api_key, key_prefix: prefix };
    }
    case 'key:create': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const cap = values['monthly-credits'] === undefined ? null : monthlyCap(values['monthly-credits']);
      const { api_key, prefix } = await issueApiKey(repo, ws.id, undefined, undefined, cap);
      return { workspace_id: ws.id, api_key, key_prefix: prefix, monthly_credits: cap };
    }
    case 'key:cap': {
      const prefix = keyPrefix(need(values, 'key'));
      const cap = monthlyCap(need(values, 'monthly-credits'));
      if (!(await repo.setKeyCap(prefix, cap))) throw new UsageError(`no live key with prefix ${prefix} (see key:list)`);
      return { key_prefix: prefix, monthly_credits: cap };
    }
    case 'key:list': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const keys = await repo.listKeys(ws.id);
      return {
        workspace_id: ws.id,
        keys: keys.map((k) => ({
          key_prefix: k.prefix,
          created_at: new Date(k.createdAt).toISOString(),
          revoked: k.revokedAt !== null,
          revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
          created_by: k.createdBy,
          last_used_at: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
          monthly_credits: k.monthlyCredits,
        })),
      };
    }
    case 'key:revoke': {
      // The whole key (any shape: the bootstrap key is whatever BOOTSTRAP_API_KEY held), or its prefix.
      const given = need(values, 'key');
      const found = await repo.findKey(hashApiKey(given));
      let prefix: string;
      if (found) prefix = found.key.prefix;
      else if (isKeyPrefix(given)) prefix = given;
      else if (keyPrefix(given) !== given) {
        throw new UsageError(
          `no key matches: ${keyPrefix(given)}_… is not a stored key (check it, or revoke by its prefix: --key ${keyPrefix(given)})`,
        );
      } else
        throw new UsageError(
          'no key matches: pass the whole key, or its prefix (wfs_xxxxxxxx, or boot_xxxxxxxx for BOOTSTRAP_API_KEY; see key:list)',
        );
      if (!(await repo.revokeKey(prefix))) throw new UsageError(`no live key with prefix ${prefix} (unknown, or revoked already)`);
      return { revoked: true, key_prefix: prefix };
    }
    case 'credits:grant': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const credits = wholeNumber(need(values, 'amount'), 'amount', 1, MAX_BALANCE, POSITIVE_CREDITS);
      return { workspace_id: ws.id, balance: await grantOrFail(storage, ws.id, credits, 'credits:grant') };
    }
    case 'credits:adjust': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const delta = wholeNumber(
        need(values, 'amount'),
        'amount',
        -MAX_BALANCE,
        MAX_BALANCE,
        `a non-zero whole number of credits between -${MAX_BALANCE} and ${MAX_BALANCE} (negative takes credits away: --amount=-50)`,
        true,
      );
      const reason = need(values, 'reason').trim();
      if (reason === '') throw new UsageError('--reason must say why (it is kept in the ledger)');
      if ([...reason].length > MAX_REASON_CHARS) throw new UsageError(`--reason must be at most ${MAX_REASON_CHARS} characters`);
      const outcome = await storage.credits.adjust(ws.id, delta, { note: reason });
      if (!outcome.ok) {
        throw new UsageError(
          outcome.reason === 'negative'
            ? `refused: the balance is ${outcome.balance}; adjusting by ${delta} would take it below zero`
            : `refused: the balance is ${outcome.balance}; adjusting by ${delta} would pass the largest balance allowed (${MAX_BALANCE})`,
        );
      }
      return { workspace_id: ws.id, adjusted: delta, reason, balance: outcome.balance };
    }
    case 'credits:ledger': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const entries = await storage.credits.entries(ws.id, values.limit ? count(values.limit, 'limit') : 100);
      return {
        workspace_id: ws.id,
        balance: await storage.credits.balance(ws.id),
        entries: entries.map((e) => ({ ...e, createdAt: new Date(e.createdAt).toISOString() })),
      };
    }
    case 'credits:usage': {
      const ws = await workspaceOrFail(storage, need(values, 'workspace'));
      const days = values.days ? wholeNumber(values.days, 'days', 1, 36_500, 'a whole number of days from 1 to 36500') : 30;
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
    case 'oauth:rotate-keys': {
      // Every process signs the next token with the new key (keys are read per token) and accepts it at once (by key id).
      const keys = new SigningKeys(storage.oauth, config.oauthAccessTokenSeconds);
      const rotated = await keys.rotate();
      return { kid: rotated.kid, retired: rotated.retired, retired_keys_verify_until: new Date(Date.now() + keys.overlapMs).toISOString() };
    }
    case 'user:create': {
      const workspaceId = values.workspace;
      if (workspaceId !== undefined) await workspaceOrFail(storage, workspaceId);
      const { user, workspace, role } = await createUser(storage, {
        email: need(values, 'email'),
        password: need(values, 'password'),
        workspaceId,
        role: values.role,
        newWorkspace: { plan: 'pro' },
      });
      // A workspace of their own starts like one from workspace:create.
      if (workspaceId === undefined) await storage.credits.grant(workspace.id, DEFAULT_WORKSPACE_CREDITS, { note: 'user:create' });
      return { user_id: user.id, email: user.email, workspace_id: workspace.id, role };
    }
    case 'user:password': {
      const user = await setPassword(storage, need(values, 'email'), need(values, 'password'));
      return { user_id: user.id, email: user.email, password_changed: true, sessions_ended: true };
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
