import type { Redis, RedisOptions } from 'ioredis';
import { log } from '../../core/log.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { describeRedis, openRedis } from '../redis/redis-client.ts';

export function isReplyError(e: unknown): boolean {
  return e instanceof Error && e.name === 'ReplyError';
}

export const isNoGroup = (e: unknown): boolean => String((e as Error)?.message).includes('NOGROUP');

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Reconnect quickly (a 10 s outage should cost seconds, not minutes), with a little jitter. */
export const retryStrategy = (times: number): number => Math.min(times * 100, 2000) + Math.floor(Math.random() * 100);

/**
 * The connections of one queue and their health: one log line per outage (not one per
 * reconnection attempt), and one when every connection is back.
 */
export class RedisLinks {
  private down = false;
  private readonly conns: Redis[] = [];

  constructor(
    private readonly target: RedisTarget,
    private readonly workerId: string,
    private readonly closing: () => boolean,
  ) {}

  connect(extra: Partial<RedisOptions>): Redis {
    const conn = openRedis(this.target, { retryStrategy, ...extra });
    this.conns.push(conn);
    // ioredis reconnects by itself; without an 'error' listener it would print every failed attempt.
    conn.on('error', (e: Error) => this.trouble(e));
    conn.on('ready', () => {
      if (!this.down || this.conns.some((c) => c.status !== 'ready')) return;
      this.down = false;
      log.info('redis connection restored', { worker: this.workerId, redis: describeRedis(this.target) });
    });
    return conn;
  }

  trouble(e: unknown): void {
    if (isReplyError(e)) {
      log.error('redis command failed', { worker: this.workerId, error: (e as Error).message });
      return;
    }
    if (this.down || this.closing()) return;
    this.down = true;
    log.warn('redis unavailable; jobs wait until it is back', {
      worker: this.workerId,
      redis: describeRedis(this.target),
      error: (e as Error)?.message,
    });
  }
}
