import type { Redis } from 'ioredis';
import { field } from './redis-envelope.ts';
import { claim, ownPending } from './redis-scripts.ts';

/** The consumer group every worker of a queue reads in. */
export const GROUP = 'workers';

/** A pending entry handed to this consumer: its id, fields and how many times it was delivered. */
export type PendingEntry = [id: string, fields: string[], deliveries: number];

/** Creates the consumer group (and the stream) unless it exists. */
export async function ensureGroup(cmd: Redis, stream: string): Promise<void> {
  try {
    await cmd.call('XGROUP', ['CREATE', stream, GROUP, '0', 'MKSTREAM']);
  } catch (e) {
    if (!String((e as Error).message).includes('BUSYGROUP')) throw e;
  }
}

/** Claims up to `count` entries idle longer than `idleMs` (their consumer died or stalled), from `cursor` on. */
export async function claimStalled(
  cmd: Redis,
  stream: string,
  consumer: string,
  idleMs: number,
  cursor: string,
  count: number,
): Promise<{ cursor: string; entries: PendingEntry[] }> {
  const [next, entries] = (await claim.run(cmd, [stream], [GROUP, consumer, idleMs, cursor, count])) as [string, PendingEntry[]];
  return { cursor: next, entries };
}

/** Entries pending in this consumer's own name (a delivery whose reply was lost). */
export async function ownPendingEntries(cmd: Redis, stream: string, consumer: string, count: number): Promise<PendingEntry[]> {
  return (await ownPending.run(cmd, [stream], [GROUP, consumer, count])) as PendingEntry[];
}

/** Forgets consumers of dead processes (nothing pending, idle > 10 min) so XINFO stays readable. */
export async function sweepConsumers(cmd: Redis, stream: string, consumer: string): Promise<void> {
  const rows = (await cmd.call('XINFO', ['CONSUMERS', stream, GROUP])) as unknown[][];
  for (const row of rows) {
    const name = field(row, 'name');
    if (name && name !== consumer && Number(field(row, 'pending')) === 0 && Number(field(row, 'idle')) > 600_000) {
      await cmd.call('XGROUP', ['DELCONSUMER', stream, GROUP, name]);
    }
  }
}

/** Ends a consumer's blocking XREADGROUP at once (CLIENT UNBLOCK answers it as a timeout, so nothing is lost). */
export async function unblockReader(cmd: Redis, readerName: string): Promise<void> {
  try {
    const list = String(await Promise.race([cmd.call('CLIENT', ['LIST', 'TYPE', 'normal']), Bun.sleep(500).then(() => '')]));
    const line = list.split('\n').find((l) => l.includes(` name=${readerName} `));
    const id = line?.match(/^id=(\d+)/)?.[1];
    if (id) await cmd.call('CLIENT', ['UNBLOCK', id]);
  } catch {
    // CLIENT may be forbidden by ACLs: the read then ends at its BLOCK timeout or on disconnect.
  }
}

/** A cleanly stopped consumer with nothing pending removes its name from the group. */
export async function forgetConsumer(cmd: Redis, stream: string, consumer: string): Promise<void> {
  try {
    const mine = (await cmd.call('XPENDING', [stream, GROUP, '-', '+', 1, consumer])) as unknown[];
    if (mine.length === 0) await cmd.call('XGROUP', ['DELCONSUMER', stream, GROUP, consumer]);
  } catch {
    // harmless: the sweep of another consumer removes it later
  }
}
