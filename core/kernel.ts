import type { Config } from './config.ts';
import type { ProjectEventBus } from './ports/project-events.ts';
import type { ExpressionPool } from './expressions/expression-pool.ts';
import type { JobQueue } from './ports/queue.ts';
import type { RateLimiter } from './ports/rate-limiter.ts';
import type { WorkerStatsBoard } from './metrics/worker-stats.ts';
import type { OAuthServer } from './identity/oauth/oauth-server.ts';
import type { PluginRegistry } from './plugins/registry.ts';
import type { LongRequests } from './services/long-requests.ts';
import type { Storage } from './ports/storage.ts';

/**
 * Everything an operation or job handler may use. What stays module state is process-wide by
 * nature: the plans (configurePlans, once at start), the log level, and which months' credits this
 * process has granted already (a memo of a write that is idempotent anyway).
 */
export interface Kernel {
  config: Config;
  storage: Storage;
  plugins: PluginRegistry;
  queue: JobQueue;
  /** Per-provider request budgets (shared through Redis when REDIS_URL is set). */
  rateLimiter: RateLimiter;
  /** Every worker's queue counters, for /metrics (through Redis when scaled out). */
  statsBoard: WorkerStatsBoard;
  /** Sandbox threads for tenant JSONata (formulas, run conditions, extracts). */
  expressions: ExpressionPool;
  /** What changed in each project, for its watchers (GET /projects/{id}/events); through Redis when scaled out. */
  events: ProjectEventBus;
  /** The built-in OAuth authorization server: issues tokens on the REST host, verifies them on the MCP host. */
  oauth: OAuthServer;
  /** Event streams and waits this process holds open, bounded per workspace and in all (core/services/long-requests.ts). */
  longRequests: LongRequests;
  /** This process's state: `draining` from SIGTERM on (GET /ready answers 503 so balancers route elsewhere). */
  lifecycle: { draining: boolean };
}
