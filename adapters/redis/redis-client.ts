import { Redis, type RedisOptions } from 'ioredis';
import { redactUrl } from '../../core/log.ts';
import type { RedisTarget } from '../../core/redis-target.ts';

/**
 * The one place Redis connections are made (queue, project events, rate limits, worker stats), so
 * that every one of them follows the configured target: one server, or the primary Sentinel names.
 */

/** redactUrl, also for `redis://:password@host` (no user name), the usual Redis form. */
export const safeUrl = (url: string): string => redactUrl(url).replace(/\/\/:[^@]*@/, '//:***@');

/** The target for logs and errors, without any password. */
export function describeRedis(target: RedisTarget): string {
  if (typeof target === 'string') return safeUrl(target);
  return `sentinel:${target.name}@${target.sentinels.map((s) => (s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`)).join(',')}`;
}

/**
 * A demoted primary answers writes with READONLY (a failover while this connection stayed open):
 * reconnect, which asks the sentinels for the new primary, and send the command again there.
 */
const onReadOnly = (e: Error): 2 | false => (e.message.startsWith('READONLY') ? 2 : false);

/** A connection to the target with the caller's options (RESP2: the replies the queue's scripts parse). */
export function openRedis(target: RedisTarget, options: RedisOptions = {}): Redis {
  if (typeof target === 'string') return new Redis(target, { protocol: 2, ...options });
  // ioredis asks the sentinels for the primary on every (re)connection and checks its role (its README, "Sentinel").
  return new Redis({
    protocol: 2,
    reconnectOnError: onReadOnly,
    ...options,
    sentinels: target.sentinels,
    name: target.name,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
  });
}
