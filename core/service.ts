import { InProcessQueue } from '../adapters/queue/in-process.ts';
import { openStorage } from '../adapters/storage/sql-storage.ts';
import type { Config } from './config.ts';
import { restApp } from './http/rest-app.ts';
import { runBuilderJob } from './jobs/run-builder.ts';
import { runEnrichmentJob } from './jobs/run-enrichment.ts';
import type { Kernel } from './kernel.ts';
import { log, redactUrl } from './log.ts';
import { operations } from './operations/index.ts';
import { loadPlugins } from './plugins/registry.ts';
import { issueApiKey, hashApiKey } from './services/api-keys.ts';
import { BUILDER_RUN_JOB } from './services/projects.ts';
import { ENRICH_JOB } from './services/row-insert.ts';

export interface RunningService {
  kernel: Kernel;
  /** REST base URL, e.g. http://127.0.0.1:3000/api/enterprise (undefined when REST is off). */
  restUrl?: string;
  stop(): Promise<void>;
}

/** Opens storage, loads plugins and builds the kernel (no listener). */
export async function createKernel(config: Config): Promise<Kernel> {
  const plugins = await loadPlugins(config.pluginsDir);
  const storage = await openStorage(config.databaseUrl);
  const queue = new InProcessQueue();
  return { config, storage, plugins, queue };
}

/** BOOTSTRAP_API_KEY: creates (once) a `default` workspace on `pro` holding that key. */
export async function bootstrap(kernel: Kernel): Promise<void> {
  const key = kernel.config.bootstrapApiKey;
  if (!key) return;
  const repo = kernel.storage.workspaces;
  if (await repo.findKey(hashApiKey(key))) return;
  const ws = await repo.create({ name: 'default', plan: 'pro' });
  await issueApiKey(repo, ws.id, key);
  if (kernel.config.bootstrapCredits > 0) await repo.grantCredits(ws.id, kernel.config.bootstrapCredits, 'bootstrap');
  log.info('bootstrap workspace created', { workspace_id: ws.id });
}

export function startWorkers(kernel: Kernel): void {
  kernel.queue.consume(
    {
      [BUILDER_RUN_JOB]: (job) => runBuilderJob(kernel, job),
      [ENRICH_JOB]: (job) => runEnrichmentJob(kernel, job),
    },
    { concurrency: kernel.config.workerConcurrency },
  );
}

/** Starts the service as `bun run start` does: REST listener plus in-process workers. */
export async function startService(config: Config, options: { rest?: boolean } = {}): Promise<RunningService> {
  const kernel = await createKernel(config);
  await bootstrap(kernel);
  if (config.workers > 0) startWorkers(kernel);
  let restUrl: string | undefined;
  let server: { stop(): Promise<void> | void } | undefined;
  if (options.rest !== false) {
    // Bun's own cap sits above ours so that the handler can answer a readable 413 first.
    const maxRequestBodySize = config.maxBodyBytes * 2 + 65_536;
    const app = restApp(kernel, operations).listen({ hostname: config.host, port: config.port, maxRequestBodySize });
    const port = app.server?.port;
    restUrl = `http://${config.host}:${port}${config.basePath}`;
    server = { stop: async () => void (await app.stop()) };
    log.info('REST API listening', { url: restUrl, docs: `${restUrl}/docs`, database: redactUrl(config.databaseUrl) });
  }
  return {
    kernel,
    restUrl,
    async stop() {
      await server?.stop();
      await kernel.queue.close();
      await kernel.storage.close();
    },
  };
}
