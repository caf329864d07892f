import { newId } from '../../core/ids.ts';
import type { Job, JobHandler, JobQueue } from '../../core/jobs/queue.ts';
import { log } from '../../core/log.ts';

/**
 * The embedded default queue: jobs live in memory and run in this process. Work queued here is
 * lost if the process dies; set REDIS_URL for durable jobs.
 */
export class InProcessQueue implements JobQueue {
  private readonly waiting: Job[] = [];
  private handlers: Record<string, JobHandler> = {};
  private concurrency = 0;
  private running = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  async enqueue(type: string, payload: unknown): Promise<string> {
    if (this.closed) throw new Error('queue is closed');
    const job: Job = { id: newId(), type, payload, attempt: 1 };
    this.waiting.push(job);
    queueMicrotask(() => this.pump());
    return job.id;
  }

  consume(handlers: Record<string, JobHandler>, options: { concurrency: number }): void {
    this.handlers = handlers;
    this.concurrency = options.concurrency;
    this.pump();
  }

  private pump(): void {
    while (!this.closed && this.running < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift() as Job;
      const handler = this.handlers[job.type];
      if (!handler) {
        log.error('no handler for job type', { job_id: job.id, type: job.type });
        continue;
      }
      this.running++;
      handler(job)
        .catch((e) => log.error('job failed', { job_id: job.id, type: job.type, error: (e as Error).message }))
        .finally(() => {
          this.running--;
          this.pump();
          this.notifyIdle();
        });
    }
    this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.running === 0 && (this.waiting.length === 0 || this.concurrency === 0)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  drain(): Promise<void> {
    if (this.running === 0 && (this.waiting.length === 0 || this.concurrency === 0)) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.running > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }
}
