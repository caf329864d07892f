import type { Redis } from 'ioredis';
import type { DeadJob } from '../../core/ports/queue.ts';
import { field, parseEnvelope, type StreamEntry, toDeadJob } from './redis-envelope.ts';
import { redrive } from './redis-scripts.ts';

/** The newest dead-lettered jobs first. */
export async function listDead(cmd: Redis, deadKey: string, limit: number): Promise<DeadJob[]> {
  if (limit <= 0) return [];
  const entries = (await cmd.call('XREVRANGE', [deadKey, '+', '-', 'COUNT', limit])) as StreamEntry[];
  return entries.map(([, fields]) => toDeadJob(fields));
}

/** Puts dead jobs (one by id, or all) back in the stream as first attempts; answers how many. */
export async function retryDead(
  cmd: Redis,
  keys: { dead: string; stream: string },
  maxLength: number,
  id: string | 'all',
): Promise<number> {
  let total = 0;
  let start = '-';
  const seen = new Set<string>();
  for (;;) {
    const entries = (await cmd.call('XRANGE', [keys.dead, start, '+', 'COUNT', 200])) as StreamEntry[];
    if (entries.length === 0) return total;
    const args: string[] = [];
    for (const [entryId, fields] of entries) {
      const jobId = field(fields, 'id') ?? '';
      if (id !== 'all' && jobId !== id) continue;
      // A job dead-lettered twice (a crash between two steps elsewhere) is re-driven once.
      const env = parseEnvelope(field(fields, 'job'));
      const fresh = env && !seen.has(jobId) ? JSON.stringify({ ...env, attempt: 1, enqueuedAt: Date.now(), lastError: undefined }) : '';
      seen.add(jobId);
      args.push(entryId, fresh);
    }
    if (args.length > 0) total += Number(await redrive.run(cmd, [keys.dead, keys.stream], [maxLength, ...args]));
    start = `(${(entries.at(-1) as StreamEntry)[0]}`;
  }
}
