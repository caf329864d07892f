import type { ProjectEventBus } from '../../core/ports/project-events.ts';
import type { RedisTarget } from '../../core/redis-target.ts';
import { openRedis } from '../redis/redis-client.ts';
import { InProcessProjectEvents } from './in-process-events.ts';
import { RedisProjectEvents } from './redis-events.ts';

/** Project events: through Redis when it is configured (workers and API processes apart), else in this process. */
export function openProjectEvents(redis: RedisTarget | undefined, prefix: string): ProjectEventBus {
  if (!redis) return new InProcessProjectEvents();
  // Publishing fails at once while Redis is away (no offline queue): a write never waits for an event.
  const publisher = openRedis(redis, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const reader = openRedis(redis, { maxRetriesPerRequest: null });
  for (const c of [publisher, reader]) c.on('error', () => undefined);
  return new RedisProjectEvents(publisher, reader, prefix);
}
