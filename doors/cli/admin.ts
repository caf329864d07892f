import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../../core/config.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { joinNegativeValues, MissingFlag, UsageError } from './args.ts';
import type { AdminCommand, CommandInput } from './command.ts';
import { creditsAdjust } from './commands/credits-adjust.ts';
import { creditsGrant } from './commands/credits-grant.ts';
import { creditsLedger } from './commands/credits-ledger.ts';
import { creditsUsage } from './commands/credits-usage.ts';
import { jobsDead, jobsRetry, jobsStats } from './commands/jobs.ts';
import { keyCap } from './commands/key-cap.ts';
import { keyCreate } from './commands/key-create.ts';
import { keyList } from './commands/key-list.ts';
import { keyRevoke } from './commands/key-revoke.ts';
import { oauthLink } from './commands/oauth-link.ts';
import { oauthRotateKeys } from './commands/oauth-rotate-keys.ts';
import { planSet } from './commands/plan-set.ts';
import { userCreate } from './commands/user-create.ts';
import { userPassword } from './commands/user-password.ts';
import { workspaceCreate } from './commands/workspace-create.ts';

export { CsvText } from './args.ts';
export type { JobsAccess } from './command.ts';

/**
 * `bun run admin <command> [--flags]` (app/admin.ts): workspace and key administration on
 * DATABASE_URL, one file per command under commands/. Prints one JSON object; exits 1 with
 * {"error": ...} on a mistake.
 */
const COMMANDS: Record<string, AdminCommand> = {
  'workspace:create': workspaceCreate,
  'key:create': keyCreate,
  'key:cap': keyCap,
  'key:list': keyList,
  'key:revoke': keyRevoke,
  'credits:grant': creditsGrant,
  'credits:adjust': creditsAdjust,
  'credits:ledger': creditsLedger,
  'credits:usage': creditsUsage,
  'jobs:stats': jobsStats,
  'jobs:dead': jobsDead,
  'jobs:retry': jobsRetry,
  'plan:set': planSet,
  'oauth:link': oauthLink,
  'oauth:rotate-keys': oauthRotateKeys,
  'user:create': userCreate,
  'user:password': userPassword,
};

const USAGE = `usage: bun run admin <command>\n${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}`;

const FLAGS = {
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
} as const;

/** Runs one command line against `storage`; `openJobs` reaches the shared queue for the jobs:* commands. */
export async function runAdmin(
  argv: string[],
  storage: Storage,
  config: Config = loadConfig(),
  openJobs?: CommandInput['openJobs'],
): Promise<unknown> {
  const [name, ...rest] = argv;
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) throw new UsageError(name ? `unknown command "${name}"\n${USAGE}` : USAGE);
  const { values } = parseArgs({ args: joinNegativeValues(rest), options: FLAGS, strict: true });
  try {
    return await command.run({ values, storage, config, openJobs });
  } catch (e) {
    if (e instanceof MissingFlag) throw new UsageError(`${e.message}\n${USAGE}`);
    throw e;
  }
}
