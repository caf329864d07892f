/**
 * The job thread of the embedded mode (`bun run start` on SQLite without Redis): a kernel of its own
 * — its own SQLite connection (WAL: the HTTP thread's reads never wait for its writes), in-process
 * queue, expression pool, webhook dispatcher and scheduler — so that builder pages, imports,
 * enrichment writes and score runs never hold the thread that answers requests. Its project events
 * go to the HTTP thread, which delivers them (adapters/queue/thread-queue.ts is the other side).
 */
import { InProcessQueue } from '../adapters/queue/in-process.ts';
import { LinkedProjectEvents } from '../adapters/events/thread-events.ts';
import type { FromJobThread, ToJobThread } from '../adapters/queue/thread-protocol.ts';
import { startOutboxRelay } from '../core/jobs/outbox-relay.ts';
import { resumeUnfinishedWork } from '../core/handlers/resume-unfinished.ts';
import type { EnqueueOptions } from '../core/ports/queue.ts';
import type { Kernel } from '../core/kernel.ts';
import { log } from '../core/log.ts';
import { closeKernel, createKernel, startWorkers } from './service.ts';

declare const self: Worker;

const post = (message: FromJobThread) => self.postMessage(message);

let kernel: Kernel | undefined;
/** This thread's events: its own watchers (running jobs), and the request thread's, both ways. */
const events = new LinkedProjectEvents();
events.linkTo((projectPk, event) => post({ kind: 'event', projectPk, event }));
let stop: () => void = () => {};

async function start(config: Parameters<typeof createKernel>[0]): Promise<void> {
  try {
    kernel = await createKernel(config, {
      queue: new InProcessQueue(config.queue),
      events,
    });
    // Before the HTTP thread takes requests: work a previous process left unfinished is queued again.
    await resumeUnfinishedWork(kernel);
    const stopWorkers = startWorkers(kernel);
    const stopRelay = startOutboxRelay(kernel);
    stop = () => {
      stopRelay();
      stopWorkers();
    };
    post({ kind: 'ready', workerId: kernel.queue.workerId });
  } catch (e) {
    post({ kind: 'failed', error: (e as Error).message });
  }
}

/** Stops taking jobs, lets running ones finish within their grace, and closes what the thread opened. */
async function close(k: Kernel): Promise<void> {
  stop();
  await closeKernel(k);
}

async function call(k: Kernel, method: string, args: unknown[]): Promise<unknown> {
  const q = k.queue;
  switch (method) {
    case 'enqueue':
      return q.enqueue(args[0] as string, args[1], args[2] as EnqueueOptions);
    case 'stats':
      return q.stats();
    case 'drain':
      return q.drain(args[0] as { timeoutMs?: number });
    case 'listDead':
      return q.listDead(args[0] as number | undefined);
    case 'retryDead':
      return q.retryDead(args[0] as string);
    case 'close':
      return close(k);
  }
  throw new Error(`unknown job thread call ${method}`);
}

self.onmessage = (event: MessageEvent<ToJobThread>) => {
  const message = event.data;
  if (message.kind === 'init') {
    void start(message.config);
    return;
  }
  if (message.kind === 'event') {
    events.receive(message.projectPk, message.event);
    return;
  }
  const k = kernel;
  if (!k) {
    post({ kind: 'reply', id: message.id, ok: false, error: 'the job thread is not started' });
    return;
  }
  call(k, message.method, message.args).then(
    (value) => post({ kind: 'reply', id: message.id, ok: true, value }),
    (e) => {
      log.debug('job thread call failed', { method: message.method, error: (e as Error).message });
      post({ kind: 'reply', id: message.id, ok: false, error: (e as Error).message });
    },
  );
};
