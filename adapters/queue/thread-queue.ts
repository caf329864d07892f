import type { ProjectEvent } from '../../core/ports/project-events.ts';
import type { LinkedProjectEvents } from '../events/thread-events.ts';
import { newId } from '../../core/ids.ts';
import type { Config } from '../../core/config.ts';
import type { ConsumeOptions, DeadJob, EnqueueOptions, JobHandlers, JobQueue, QueueStats } from '../../core/ports/queue.ts';
import { log } from '../../core/log.ts';
import type { FromJobThread, ThreadCallMethod, ToJobThread } from './thread-protocol.ts';

/** How long the job thread may take to open its kernel (plugins, storage, unfinished work). */
const START_TIMEOUT_MS = 60_000;

/**
 * The embedded mode's queue as the HTTP thread sees it: the jobs run on a job thread of their own
 * (app/job-thread.ts: its own SQLite connection, its own in-process queue and expression pool), so
 * an import, an enrichment or a score run never holds the thread that answers requests. Calls go
 * over postMessage; the job thread's project events come back and are published on `events`.
 */
export class ThreadQueue implements JobQueue {
  readonly durable = false;
  workerId = 'job-thread';
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private nextCall = 1;
  private closed = false;
  private failure: Error | undefined;

  private constructor(script: URL, events: LinkedProjectEvents) {
    this.worker = new Worker(script.href);
    this.worker.onmessage = (e: MessageEvent<FromJobThread>) => this.receive(e.data, events);
    this.worker.onerror = (e) => this.fail(new Error(`the job thread failed: ${(e as ErrorEvent).message ?? 'unknown error'}`));
  }

  /**
   * Starts the job thread (`script`: the composition root's thread entry, which builds a kernel of
   * its own) and answers once it runs jobs (its unfinished work queued again first).
   */
  static async start(script: URL, config: Config, events: LinkedProjectEvents): Promise<ThreadQueue> {
    const queue = new ThreadQueue(script, events);
    // What this thread publishes (a deletion, a row added) reaches the jobs' watchers too.
    events.linkTo((projectPk, event) => queue.sendEvent(projectPk, event));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the job thread did not start within 60 s')), START_TIMEOUT_MS);
      queue.started = (error) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      queue.post({ kind: 'init', config });
    });
    return queue;
  }

  private started: (error?: Error) => void = () => {};

  private sendEvent(projectPk: number, event: ProjectEvent): void {
    if (!this.closed && !this.failure) this.post({ kind: 'event', projectPk, event });
  }

  private receive(message: FromJobThread, events: LinkedProjectEvents): void {
    switch (message.kind) {
      case 'event':
        events.receive(message.projectPk, message.event);
        return;
      case 'ready':
        this.workerId = message.workerId;
        this.started();
        return;
      case 'failed':
        this.started(new Error(message.error));
        return;
      case 'reply': {
        const call = this.pending.get(message.id);
        if (!call) return;
        this.pending.delete(message.id);
        if (message.ok) call.resolve(message.value);
        else call.reject(new Error(message.error));
      }
    }
  }

  private fail(error: Error): void {
    this.failure = error;
    log.error('job thread stopped; jobs no longer run in this process', { error: error.message });
    this.started(error);
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }

  private post(message: ToJobThread): void {
    this.worker.postMessage(message);
  }

  private call<T>(method: ThreadCallMethod, ...args: unknown[]): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextCall++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post({ kind: 'call', id, method, args });
    });
  }

  enqueue(type: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    if (this.closed) return Promise.reject(new Error('queue is closed'));
    return this.call<string>('enqueue', type, payload, { ...options, id: options.id ?? newId() });
  }

  /** The job thread consumes with the handlers it registers itself (app/service.ts startWorkers). */
  consume(_handlers: JobHandlers, _options: ConsumeOptions): void {
    throw new Error('the job thread consumes its own queue');
  }

  drain(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.call<void>('drain', options);
  }

  /** Stops the job thread gracefully (running jobs get their grace period), then ends it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (!this.failure) await this.call<void>('close');
    } finally {
      this.worker.terminate();
    }
  }

  stats(): Promise<QueueStats> {
    return this.call<QueueStats>('stats');
  }

  async ping(): Promise<void> {
    if (this.failure) throw this.failure;
  }

  listDead(limit?: number): Promise<DeadJob[]> {
    return this.call<DeadJob[]>('listDead', limit);
  }

  retryDead(id: string | 'all'): Promise<number> {
    return this.call<number>('retryDead', id);
  }
}
