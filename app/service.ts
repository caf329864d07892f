import { openQueue } from '../adapters/queue/open-queue.ts';
import { openStatsBoard } from '../adapters/metrics/worker-stats-boards.ts';
import { openRateLimiter } from '../adapters/rate-limit/open-rate-limiter.ts';
import { openStorage } from '../adapters/storage/sql-storage.ts';
import { sharedByConnections } from '../adapters/storage/database.ts';
import { ThreadQueue } from '../adapters/queue/thread-queue.ts';
import { LinkedProjectEvents } from '../adapters/events/thread-events.ts';
import { openProjectEvents } from '../adapters/events/open-project-events.ts';
import { publishingStorage } from '../core/events/publishing-storage.ts';
import { ensureConsoleBuilt } from '../console/build.ts';
import type { Config } from '../core/config.ts';
import { openExpressionPool } from '../core/expressions/expression-pool.ts';
import { restApp } from '../doors/http/rest-app.ts';
import { raiseNativeHeaderLimit } from '../doors/http/request-checks.ts';
import { IDLE_TIMEOUT_S, stopGracefully } from '../doors/http/stop-gracefully.ts';
import { startOutboxRelay } from '../core/jobs/outbox-relay.ts';
import { whileProjectLives } from '../core/jobs/while-project-lives.ts';
import { runBuilderJob } from '../core/handlers/run-builder.ts';
import { runEnrichmentJob } from '../core/handlers/run-enrichment.ts';
import { resumeUnfinishedWork } from '../core/handlers/resume-unfinished.ts';
import { runIcpScoreJob } from '../core/handlers/run-icp-score.ts';
import type { JobQueue } from '../core/ports/queue.ts';
import type { ProjectEventBus } from '../core/ports/project-events.ts';
import type { Kernel } from '../core/kernel.ts';
import { log, redactUrl } from '../core/log.ts';
import { type RunningMcpHost, startMcpHost } from '../doors/mcp/mcp-host.ts';
import { mcpAppHtml } from '../mcp-app/build.ts';
import { mcpUrls } from '../core/identity/oauth/resource-urls.ts';
import { issuerUrl } from '../core/identity/oauth/issuer.ts';
import { OAuthServer } from '../core/identity/oauth/oauth-server.ts';
import { operations } from '../core/operations/index.ts';
import { configurePlans } from '../core/plans.ts';
import {
  BUILDER_RUN_JOB,
  BuilderRunPayload,
  ENRICH_JOB,
  EnrichPayloadSchema,
  ICP_SCORE_JOB,
  IcpScorePayload,
  LEGACY_WEBHOOK_EVENTS_JOB,
  WEBHOOK_EVENTS_JOB,
  WebhookEventsPayload,
} from '../core/jobs/job-names.ts';
import { loadPlugins } from './load-plugins.ts';
import { issueApiKey, hashApiKey } from '../core/identity/api-keys.ts';
import { bootstrapAdmin } from '../core/identity/accounts.ts';
import { startScheduler } from '../core/schedules/scheduler.ts';
import { pruneUploads } from '../core/services/uploads.ts';
import { LongRequests } from '../core/services/long-requests.ts';
import { startWebhookDispatcher } from '../core/webhooks/dispatcher.ts';
import { runWebhookEventsJob } from '../core/webhooks/event-job.ts';

export interface RunningService {
  kernel: Kernel;
  /** REST base URL, e.g. http://127.0.0.1:3000/api/enterprise (undefined when REST is off). */
  restUrl?: string;
  /** MCP endpoint, e.g. http://127.0.0.1:3001/mcp/ (undefined when the MCP host is off). */
  mcpUrl?: string;
  stop(): Promise<void>;
}

/**
 * Opens storage, loads plugins and builds the kernel (no listener). `parts` replaces the queue or
 * the event bus the configuration would open (the embedded mode's job thread and HTTP thread).
 */
export async function createKernel(
  config: Config,
  parts: { queue?: JobQueue | (() => Promise<JobQueue>); events?: ProjectEventBus } = {},
): Promise<Kernel> {
  configurePlans(config.plans);
  const plugins = await loadPlugins(config.pluginsDir, config.pluginPackages);
  const storage = await openStorage(config.databaseUrl);
  const prefix = config.queue.prefix ?? 'wfs';
  const events = parts.events ?? openProjectEvents(config.redis, prefix);
  let queue: JobQueue;
  try {
    const given = parts.queue;
    queue = typeof given === 'function' ? await given() : (given ?? (await openQueue(config.redis, config.queue)));
  } catch (e) {
    await storage.close();
    throw e;
  }
  const rateLimiter = openRateLimiter(config.redis, prefix);
  const statsBoard = openStatsBoard(config.redis, prefix);
  const expressions = openExpressionPool(config);
  return {
    config,
    storage: publishingStorage(storage, events),
    oauth: new OAuthServer(storage.oauth, config.oauthAccessTokenSeconds),
    plugins,
    queue,
    rateLimiter,
    statsBoard,
    expressions,
    events,
    longRequests: new LongRequests(config.maxStreamsPerWorkspace, config.maxStreams),
    lifecycle: { draining: false },
  };
}

/**
 * BOOTSTRAP_API_KEY: creates (once) a `default` workspace on `pro` holding that key. Logs the key's
 * prefix (never the key), which is what `admin key:list` shows and `admin key:revoke` accepts. A
 * revoked bootstrap key stays revoked: it is not issued again on the next start.
 */
export async function bootstrap(kernel: Kernel): Promise<void> {
  const key = kernel.config.bootstrapApiKey;
  if (!key) return;
  const repo = kernel.storage.workspaces;
  const found = await repo.findKey(hashApiKey(key));
  if (found) {
    const fields = { workspace_id: found.workspace.id, key_prefix: found.key.prefix };
    if (found.key.revokedAt !== null)
      log.warn('bootstrap key is revoked; BOOTSTRAP_API_KEY gives no access (remove it or choose another)', fields);
    else log.info('bootstrap key ready', fields);
    return;
  }
  const ws = await repo.create({ name: 'default', plan: 'pro' });
  const { prefix } = await issueApiKey(repo, ws.id, key);
  if (kernel.config.bootstrapCredits > 0) await kernel.storage.credits.grant(ws.id, kernel.config.bootstrapCredits, { note: 'bootstrap' });
  log.info('bootstrap workspace created', { workspace_id: ws.id, key_prefix: prefix, credits: kernel.config.bootstrapCredits });
}

const projectOf = (job: { payload: unknown }) => (job.payload as { project_pk: number }).project_pk;

/** Starts consuming jobs, and publishes this worker's counters for /metrics every few seconds. */
export function startWorkers(kernel: Kernel): () => void {
  const publish = () =>
    kernel.queue
      .stats()
      .then((s) => kernel.statsBoard.publish(s))
      .catch(() => undefined);
  const timer = setInterval(publish, 5_000);
  timer.unref();
  void publish();
  // Webhook deliveries go out from, and schedules start runs in, the processes that run jobs.
  const stopDispatcher = startWebhookDispatcher(kernel);
  const stopScheduler = startScheduler(kernel);
  // Uploaded files no project imports (abandoned uploads, deleted projects) go after a day.
  const pruning = setInterval(() => void pruneUploads(kernel), 3600_000);
  pruning.unref();
  void pruneUploads(kernel);
  kernel.queue.consume(
    {
      // A payload that does not fit goes to the dead letter with the reason, never into a retry loop.
      // A project's jobs stop when it is deleted, wherever that happens (while-project-lives.ts).
      [BUILDER_RUN_JOB]: {
        handler: (job, ctx) => whileProjectLives(kernel, projectOf(job), ctx, (c) => runBuilderJob(kernel, job, c)),
        payloadSchema: BuilderRunPayload,
      },
      [ENRICH_JOB]: {
        handler: (job, ctx) =>
          whileProjectLives(
            kernel,
            projectOf(job),
            ctx,
            (c) => runEnrichmentJob(kernel, job, c),
            (job.payload as { col_no: number }).col_no,
          ),
        payloadSchema: EnrichPayloadSchema,
      },
      [ICP_SCORE_JOB]: { handler: (job, ctx) => runIcpScoreJob(kernel, job, ctx), payloadSchema: IcpScorePayload },
      [WEBHOOK_EVENTS_JOB]: { handler: (job) => runWebhookEventsJob(kernel, job), payloadSchema: WebhookEventsPayload },
      [LEGACY_WEBHOOK_EVENTS_JOB]: { handler: (job) => runWebhookEventsJob(kernel, job), payloadSchema: WebhookEventsPayload },
    },
    { concurrency: kernel.config.workerConcurrency },
  );
  return () => {
    clearInterval(timer);
    stopDispatcher();
    stopScheduler();
    clearInterval(pruning);
  };
}

/**
 * Starts the service as `bun run start` does: REST listener, MCP host and in-process workers.
 * SERVE=rest or SERVE=mcp (or the options) leave one door closed, for scaled-out processes.
 */
export async function startService(config: Config, options: { rest?: boolean; mcp?: boolean } = {}): Promise<RunningService> {
  // Without Redis the jobs run in this process: on a job thread of their own (app/job-thread.ts)
  // when the database can be opened twice, so that they never hold the thread that answers requests.
  const jobThread = config.jobThread && !config.redis && config.workers > 0 && sharedByConnections(config.databaseUrl);
  // The database is migrated before the job thread opens it.
  const linked = jobThread ? new LinkedProjectEvents() : undefined;
  const kernel = linked
    ? await createKernel(config, {
        events: linked,
        queue: () => ThreadQueue.start(new URL('./job-thread.ts', import.meta.url), config, linked),
      })
    : await createKernel(config);
  await bootstrap(kernel);
  await bootstrapAdmin(kernel);
  // Before any request: work the in-process queue lost with a previous process is queued again (the job thread does it itself).
  if (!jobThread && config.workers > 0 && !kernel.queue.durable) await resumeUnfinishedWork(kernel);
  const stopPublishing = !jobThread && config.workers > 0 ? startWorkers(kernel) : () => {};
  // Every process relays the outbox: jobs stored while Redis was away reach it once it is back.
  const stopRelay = jobThread ? () => {} : startOutboxRelay(kernel);
  let restUrl: string | undefined;
  let restPort = config.port;
  let server: { stop(): Promise<unknown> } | undefined;
  if (options.rest ?? config.serve !== 'mcp') {
    // Bun's own cap sits above ours so that the handler can answer a readable 413 first; uploads
    // (POST /projects/import.csv) are the largest bodies, and every other route bounds what it reads.
    const maxRequestBodySize = Math.max(config.maxBodyBytes * 2, config.maxUploadBytes) + 65_536;
    raiseNativeHeaderLimit(config.maxHeaderBytes);
    // The console is bundled from its sources on start when they changed (≈0.1 s); the API serves even if it cannot be.
    await ensureConsoleBuilt().catch((e) =>
      log.error('the console could not be built; the API serves without it', { error: (e as Error).message }),
    );
    const app = restApp(kernel, operations).listen({
      hostname: config.host,
      port: config.port,
      maxRequestBodySize,
      idleTimeout: IDLE_TIMEOUT_S,
    });
    restPort = app.server?.port ?? config.port;
    restUrl = `http://${config.host}:${restPort}${config.basePath}`;
    const listener = app.server ?? undefined;
    server = { stop: () => stopGracefully(listener, config.shutdownGraceMs, 'rest') };
    log.info('REST API listening', { url: restUrl, docs: `${restUrl}/docs`, database: redactUrl(config.databaseUrl) });
  }
  let mcp: RunningMcpHost | undefined;
  if (options.mcp ?? config.serve !== 'rest') {
    // The project table MCP App is bundled on start when its sources changed (as the console is); MCP serves even if it cannot be.
    await mcpAppHtml().catch((e) => log.error('the MCP App could not be built; ui:// reads will fail', { error: (e as Error).message }));
    mcp = startMcpHost(kernel, operations);
  }
  // The authorization server's addresses, known now that both doors have their ports.
  kernel.oauth.bind({
    issuer: issuerUrl(config, restPort),
    resource: mcp?.resource ?? mcpUrls(config, config.mcpPort).resource,
  });
  return {
    kernel,
    restUrl,
    mcpUrl: mcp?.url,
    /** Graceful: /ready turns 503 (for SHUTDOWN_DELAY_MS), both doors stop accepting and drain (SHUTDOWN_GRACE_MS), then jobs and connections close. */
    async stop() {
      kernel.lifecycle.draining = true;
      // Balancers that poll /ready (Kubernetes) take the process out of rotation before it stops accepting.
      if (config.shutdownDelayMs > 0) await Bun.sleep(config.shutdownDelayMs);
      await Promise.all([server?.stop(), mcp?.stop()]);
      stopRelay();
      stopPublishing();
      await closeKernel(kernel);
    },
  };
}

/** Closes what a kernel opened: the queue first (running jobs get their grace), the database last. */
export async function closeKernel(kernel: Kernel): Promise<void> {
  await kernel.queue.close();
  await kernel.expressions.close();
  await kernel.rateLimiter.close();
  await kernel.statsBoard.close();
  await kernel.events.close();
  await kernel.storage.close();
}
