import type { QueueOptions } from './ports/queue.ts';
import { type PlanRules, parsePlans } from './plans.ts';
import { type RedisTarget, redisTarget } from './redis-target.ts';

/**
 * Runtime configuration, read from the environment once at start (names are the contract of
 * docs/operations.md). Read at call time on purpose: the variables a plugin declares (ctx.env,
 * core/plugins/plugin-context.ts), ALLOW_PRIVATE_NETWORK (safe-fetch) and LOG_LEVEL (log.ts, which
 * must work before any configuration is read).
 */
export interface Config {
  host: string;
  port: number;
  mcpPort: number;
  basePath: string;
  databaseUrl: string;
  /** REDIS_URL, or REDIS_SENTINELS + REDIS_SENTINEL_NAME (core/redis-target.ts); undefined: jobs run in this process. */
  redis: RedisTarget | undefined;
  /**
   * JOB_OUTBOX_KEEP_S (default 600): how long an outbox job stays recorded after the queue took it, to
   * be handed over again if the queue's server changes meanwhile (a Sentinel failover may lose it).
   */
  outboxKeepMs: number;
  workers: number;
  /**
   * JOB_THREAD (default 1): without Redis, jobs run on a thread of their own with its own database
   * connection, so they never hold the thread that answers requests (0: on that thread, as before).
   */
  jobThread: boolean;
  workerConcurrency: number;
  /** Job queue tuning (JOB_* variables, see queueOptions). */
  queue: QueueOptions;
  providerMode: 'live' | 'sandbox';
  bootstrapApiKey: string | undefined;
  bootstrapCredits: number;
  /** BOOTSTRAP_ADMIN_EMAIL + BOOTSTRAP_ADMIN_PASSWORD: the console's first owner, created once (docs/console.md). */
  bootstrapAdmin: { email: string; password: string } | undefined;
  /** The address people reach the service at (PUBLIC_URL): https makes session cookies `Secure`. */
  publicUrl: string | undefined;
  /** TRUST_PROXY=1: behind a proxy, a client's address is the last hop of X-Forwarded-For (sign-in limits). */
  trustProxy: boolean;
  maxBodyBytes: number;
  /** The request line and headers together (MAX_HEADER_BYTES, default 16384): larger is a JSON 431. */
  maxHeaderBytes: number;
  pluginsDir: string | undefined;
  /** npm packages whose plugin definitions load beside the bundled ones (PLUGINS, comma-separated names or package paths). */
  pluginPackages: string[];
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Which doors this process opens (SERVE): `all` (REST + MCP), `rest` or `mcp`. */
  serve: 'all' | 'rest' | 'mcp';
  /** OAuth authorization server whose access tokens the MCP host accepts (OAUTH_ISSUER). */
  oauthIssuer: string | undefined;
  /** Lifetime of the built-in authorization server's access tokens (OAUTH_ACCESS_TOKEN_SECONDS, default 3600). */
  oauthAccessTokenSeconds: number;
  /** Its JWKS (OAUTH_JWKS_URL); default `${OAUTH_ISSUER}/.well-known/jwks.json`. */
  oauthJwksUrl: string | undefined;
  /** The MCP URL clients connect to, and the tokens' audience (MCP_RESOURCE_URL); default http://HOST:MCP_PORT/mcp/. */
  mcpResourceUrl: string | undefined;
  /** Plans by name (defaults, plus PLANS_JSON). */
  plans: Record<string, PlanRules>;
  /** Size bounds of stored data and of answers (MAX_CELL_BYTES, MAX_ROW_BYTES, MAX_PAGE_BYTES). */
  limits: { cellBytes: number; rowBytes: number; pageBytes: number };
  /** MCP_MAX_RESULT_BYTES (default 80000): no tool result is larger; a page of rows is cut to fit (docs/mcp.md). */
  mcpMaxResultBytes: number;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`; unset, it is open. */
  metricsToken: string | undefined;
  /** The sandbox of tenant JSONata (FORMULA_TIMEOUT_MS, EXPRESSION_MAX_MEMORY_MB, EXPRESSION_WORKERS). */
  expressions: { timeoutMs: number; maxMemoryMb: number; workers: number };
  /** Browser origins the REST door answers with CORS headers (CORS_ORIGINS, comma-separated; `*` = any; default none). */
  corsOrigins: string[];
  /** Origins whose requests the MCP host accepts besides its own (MCP_ALLOWED_ORIGINS, comma-separated; default none). */
  mcpAllowedOrigins: string[];
  /** SIGTERM: how long in-flight requests may take to finish before their connections are cut (SHUTDOWN_GRACE_MS, default 10000). */
  shutdownGraceMs: number;
  /**
   * ENRICHMENT_CACHE_TTL_S (default 2592000, 30 days): how long a found result is reused, free, by
   * any project of the workspace for the same tool and input (a tool may keep its results less long); 0 turns reuse off.
   */
  enrichmentCacheTtlMs: number;
  /** MAX_UPLOAD_BYTES (default 1 GiB): the largest file POST /projects/import.csv takes. */
  maxUploadBytes: number;
  /** Outbound webhooks: the waits between attempts, how long a delivery is retried, how often due ones are looked for. */
  webhooks: { retryDelaysMs: number[]; retryWindowMs: number; pollMs: number };
  /** Schedules: the shortest time allowed between two runs (SCHEDULE_MIN_INTERVAL_S), how often due ones are looked for (SCHEDULE_POLL_MS). */
  schedules: { minIntervalMs: number; pollMs: number };
  /** Event streams and waits one workspace may hold open on this process (MAX_STREAMS_PER_WORKSPACE, default 20). */
  maxStreamsPerWorkspace: number;
  /** Event streams and waits this process holds open in all (MAX_OPEN_STREAMS, default 500): below its descriptors. */
  maxStreams: number;
  /** SIGTERM: how long the doors keep serving, with GET /ready at 503, before they stop accepting (SHUTDOWN_DELAY_MS, default 0). */
  shutdownDelayMs: number;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new Error(`${name} must be an integer from ${min} to ${Number.MAX_SAFE_INTEGER}, got "${raw}"`);
  }
  return n;
}

/** A comma-separated list: trimmed, empty items dropped; origins lose a trailing slash so they compare as browsers send them. */
function origins(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim().replace(/\/+$/, ''))
    .filter((s) => s !== '');
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** Normalises BASE_PATH to "/segment/..." with no trailing slash ("" is allowed for the root). */
function basePath(raw: string | undefined): string {
  if (raw === undefined) return '/api/enterprise';
  const trimmed = raw.trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * Queue tuning: JOB_VISIBILITY_TIMEOUT_MS (30000), JOB_MAX_ATTEMPTS (5), JOB_TIMEOUT_MS (900000;
 * 0 = none), JOB_SHUTDOWN_GRACE_MS (10000), JOB_BACKOFF_MS (1000, first retry delay),
 * JOB_MAX_RETRY_DELAY_MS (600000, the longest a provider's Retry-After holds a retry back),
 * JOB_QUEUE_PREFIX (wfs:jobs; Redis key prefix, also of the shared rate limits).
 */
function queueOptions(env: Env): QueueOptions {
  const options: QueueOptions = { maxAttempts: int(env, 'JOB_MAX_ATTEMPTS', 5, 1) };
  const optional = (name: string, min: number) => (env[name] === undefined || env[name] === '' ? undefined : int(env, name, 0, min));
  const visibility = optional('JOB_VISIBILITY_TIMEOUT_MS', 100);
  if (visibility !== undefined) options.visibilityTimeoutMs = visibility;
  const timeout = optional('JOB_TIMEOUT_MS', 0);
  if (timeout !== undefined) options.jobTimeoutMs = timeout;
  const grace = optional('JOB_SHUTDOWN_GRACE_MS', 0);
  if (grace !== undefined) options.shutdownGraceMs = grace;
  const backoff = optional('JOB_BACKOFF_MS', 0);
  if (backoff !== undefined) options.backoff = { baseMs: backoff };
  const maxRetryDelay = optional('JOB_MAX_RETRY_DELAY_MS', 0);
  if (maxRetryDelay !== undefined) options.maxRetryDelayMs = maxRetryDelay;
  if (env.JOB_QUEUE_PREFIX) options.prefix = env.JOB_QUEUE_PREFIX;
  options.workspaceShare = fraction(env, 'JOB_WORKSPACE_SHARE', 0.5);
  return options;
}

/** A fraction above 0 and at most 1 (a share of slots). */
function fraction(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new Error(`${name} must be a fraction above 0 and at most 1 (e.g. 0.5); got "${raw}"`);
  return n;
}

function bootstrapAdmin(env: Env): Config['bootstrapAdmin'] {
  const email = env.BOOTSTRAP_ADMIN_EMAIL || undefined;
  const password = env.BOOTSTRAP_ADMIN_PASSWORD || undefined;
  if (!email && !password) return undefined;
  if (!email || !password) throw new Error('BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD go together: set both, or neither');
  return { email, password };
}

/**
 * Waits between a delivery's attempts (Standard Webhooks' schedule: 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h…), the last one repeated until WEBHOOK_RETRY_WINDOW_S (24 h) is over.
 */
const DEFAULT_RETRY_DELAYS_S = '5,300,1800,7200,18000,36000';

/** A comma list of seconds (fractions allowed), as milliseconds. */
function seconds(env: Env, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  const parts = raw.split(',').map((s) => s.trim());
  const list = parts.map(Number);
  if (parts.some((s) => s === '') || list.some((n) => !Number.isFinite(n) || n <= 0)) {
    throw new Error(`${name} must be a comma list of seconds above 0 (e.g. ${fallback}); got "${raw}"`);
  }
  return list.map((n) => Math.round(n * 1000));
}

export function loadConfig(env: Env = process.env): Config {
  const redis = redisTarget(env);
  return {
    host: env.HOST || '127.0.0.1',
    port: int(env, 'PORT', 3000),
    // PORT=0 (any free port, as tests and embedded runs ask) makes the MCP port free too, so two such
    // processes never fight over 3001.
    mcpPort: int(env, 'MCP_PORT', env.PORT === '0' ? 0 : 3001),
    basePath: basePath(env.BASE_PATH),
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/workflow.sqlite',
    redis,
    outboxKeepMs: int(env, 'JOB_OUTBOX_KEEP_S', 600, 1) * 1000,
    // A process opening one door runs no jobs when Redis carries them to the workers (docs/operations.md);
    // without Redis its in-process queue has no other consumer, so it runs its own.
    workers: int(env, 'WORKERS', (env.SERVE ?? 'all') === 'all' || !redis ? 1 : 0),
    jobThread: oneOf(env, 'JOB_THREAD', ['0', '1'] as const, '1') === '1',
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 4, 1),
    queue: queueOptions(env),
    providerMode: oneOf(env, 'PROVIDER_MODE', ['live', 'sandbox'] as const, 'live'),
    bootstrapApiKey: env.BOOTSTRAP_API_KEY || undefined,
    bootstrapCredits: int(env, 'BOOTSTRAP_CREDITS', 1000),
    bootstrapAdmin: bootstrapAdmin(env),
    publicUrl: env.PUBLIC_URL || undefined,
    trustProxy: oneOf(env, 'TRUST_PROXY', ['0', '1'] as const, '0') === '1',
    maxBodyBytes: int(env, 'MAX_BODY_BYTES', 10 * 1024 * 1024, 1),
    maxHeaderBytes: int(env, 'MAX_HEADER_BYTES', 16_384, 1024),
    pluginsDir: env.PLUGINS_DIR || undefined,
    pluginPackages: (env.PLUGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    serve: oneOf(env, 'SERVE', ['all', 'rest', 'mcp'] as const, 'all'),
    oauthIssuer: env.OAUTH_ISSUER || undefined,
    oauthJwksUrl: env.OAUTH_JWKS_URL || undefined,
    oauthAccessTokenSeconds: int(env, 'OAUTH_ACCESS_TOKEN_SECONDS', 3600, 1),
    mcpMaxResultBytes: int(env, 'MCP_MAX_RESULT_BYTES', 80_000, 4096),
    mcpResourceUrl: env.MCP_RESOURCE_URL || undefined,
    plans: parsePlans(env.PLANS_JSON),
    limits: {
      cellBytes: int(env, 'MAX_CELL_BYTES', 262_144, 1024),
      rowBytes: int(env, 'MAX_ROW_BYTES', 1_048_576, 1024),
      pageBytes: int(env, 'MAX_PAGE_BYTES', 16 * 1_048_576, 65_536),
    },
    metricsToken: env.METRICS_TOKEN || undefined,
    corsOrigins: origins(env.CORS_ORIGINS),
    mcpAllowedOrigins: origins(env.MCP_ALLOWED_ORIGINS),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 10_000),
    enrichmentCacheTtlMs: int(env, 'ENRICHMENT_CACHE_TTL_S', 2_592_000) * 1000,
    maxUploadBytes: int(env, 'MAX_UPLOAD_BYTES', 1_073_741_824, 1024),
    webhooks: {
      retryDelaysMs: seconds(env, 'WEBHOOK_RETRY_DELAYS_S', DEFAULT_RETRY_DELAYS_S),
      retryWindowMs: int(env, 'WEBHOOK_RETRY_WINDOW_S', 86_400, 1) * 1000,
      pollMs: int(env, 'WEBHOOK_POLL_MS', 1000, 10),
    },
    schedules: {
      minIntervalMs: int(env, 'SCHEDULE_MIN_INTERVAL_S', 300, 1) * 1000,
      pollMs: int(env, 'SCHEDULE_POLL_MS', 5000, 10),
    },
    shutdownDelayMs: int(env, 'SHUTDOWN_DELAY_MS', 0),
    maxStreamsPerWorkspace: int(env, 'MAX_STREAMS_PER_WORKSPACE', 20, 1),
    maxStreams: int(env, 'MAX_OPEN_STREAMS', 500, 1),
    expressions: {
      timeoutMs: int(env, 'FORMULA_TIMEOUT_MS', 1000, 10),
      maxMemoryMb: int(env, 'EXPRESSION_MAX_MEMORY_MB', 256, 16),
      workers: int(env, 'EXPRESSION_WORKERS', 2, 1),
    },
  };
}
