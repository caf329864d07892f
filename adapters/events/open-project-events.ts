import { Redis } from 'ioredis';
import type { ProjectEventBus } from '../../core/ports/project-events.ts';
import { InProcessProjectEvents } from './in-process-events.ts';
import { RedisProjectEvents } from './redis-events.ts';

/** Project events: through Redis when REDIS_URL is set (workers and API processes apart), else in this process. */
export function openProjectEvents(redisUrl: string | undefined, prefix: string): ProjectEventBus {
  if (!redisUrl) return new InProcessProjectEvents();
  // Publishing fails at once while Redis is away (no offline queue): a write never waits for an event.
  const publisher = new Redis(redisUrl, { protocol: 2, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const reader = new Redis(redisUrl, { protocol: 2, maxRetriesPerRequest: null });
  for (const c of [publisher, reader]) c.on('error', () => undefined);
  return new RedisProjectEvents(publisher, reader, prefix);
}
