import type { Kernel } from '../../core/kernel.ts';
import type { RouteSpec } from './route-chain.ts';

/** How long one readiness check may take before it counts as failed: a load balancer polls often. */
const CHECK_TIMEOUT_MS = 2_000;

async function check(run: () => Promise<string>): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([run().catch((e: Error) => `unreachable (${e.name})`), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `GET /health`: the process answers (liveness; a load balancer restarts it when this fails).
 * `GET /ready`: it can serve — the database answers with every migration applied, and Redis answers
 * when jobs go through it; 503 names what is not (never a secret), and `draining` once SIGTERM came
 * (the process finishes what it has and exits). Outside BASE_PATH, like /metrics. Both hosts serve them.
 */
export function healthRoutes(): RouteSpec[] {
  return [
    { method: 'GET', path: '/health', outsideBasePath: true, caller: 'none', handle: async () => Response.json({ status: 'ok' }) },
    { method: 'GET', path: '/ready', outsideBasePath: true, caller: 'none', handle: ({ kernel }) => readiness(kernel) },
  ];
}

async function readiness(kernel: Kernel): Promise<Response> {
  const [database, queue] = await Promise.all([
    check(async () => {
      await kernel.storage.ping();
      const pending = await kernel.storage.pendingMigrations();
      return pending.length === 0 ? 'ok' : `migrations not applied: ${pending.join(', ')}`;
    }),
    kernel.queue.durable
      ? check(async () => {
          await kernel.queue.ping();
          return 'ok';
        })
      : Promise.resolve('in-process'),
  ]);
  const draining = kernel.lifecycle.draining;
  const ready = !draining && database === 'ok' && (queue === 'ok' || queue === 'in-process');
  const status = draining ? 'draining' : ready ? 'ready' : 'not_ready';
  return Response.json({ status, checks: { database, queue } }, { status: ready ? 200 : 503 });
}
