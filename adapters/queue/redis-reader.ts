import type { Redis } from 'ioredis';
import { log } from '../../core/log.ts';
import { isNoGroup, sleep } from './redis-connection.ts';
import { field, parseEnvelope, type StreamEntry } from './redis-envelope.ts';
import { claimStalled, ensureGroup, GROUP, ownPendingEntries, type PendingEntry, sweepConsumers } from './redis-group.ts';

/** After setting a job aside, reading pauses this long while only the slot kept for others is free. */
const DEFER_PAUSE_MS = 250;

/** What the read loop asks of the queue it reads for. */
export interface ReaderHost {
  readonly cmd: Redis;
  readonly workerId: string;
  readonly stream: string;
  readonly visibilityMs: number;
  readonly blockMs: number;
  readonly concurrency: number;
  /** Free slots now. */
  free(): number;
  /** Resolves when a running job ends. */
  waitForSlot(): Promise<void>;
  isRunning(entryId: string): boolean;
  runningCount(): number;
  closing(): boolean;
  /** Starts (or sets aside, or dead-letters) one delivered entry. */
  start(entryId: string, fields: string[], deliveries: number): void;
  connectionTrouble(e: unknown): void;
}

/**
 * The consuming side's reads: new entries (XREADGROUP BLOCK on a connection of its own, so acks
 * and heartbeats never wait behind it), entries of stalled consumers (XAUTOCLAIM past the
 * visibility timeout) and entries pending in our own name whose delivery reply was lost.
 */
export class StreamReader {
  /** When the queue last set a job aside for its workspace's share (reading pauses a moment after). */
  deferredAt = 0;
  /**
   * Set when a connection dropped: a read or claim whose reply was lost left entries pending in our
   * name that we never saw; the loop picks them up at once instead of after the visibility timeout.
   */
  recoverOwnPending = false;
  private claimCursor = '0-0';
  private lastConsumerSweep = Date.now();

  constructor(
    private readonly host: ReaderHost,
    readonly conn: Redis,
  ) {}

  async loop(): Promise<void> {
    const h = this.host;
    const reclaimEveryMs = Math.min(Math.floor(h.visibilityMs / 2), 5000);
    let nextReclaimAt = 0;
    let errorDelay = 100;
    while (!h.closing()) {
      if (h.free() <= 0) {
        await h.waitForSlot();
        continue;
      }
      // Only the slot kept for other workspaces is free and the last job read was set aside: wait a
      // moment (or for a slot) instead of reading and setting aside the same workspace's flood again.
      const pause = this.deferredAt + DEFER_PAUSE_MS - Date.now();
      if (pause > 0 && h.free() === 1 && h.concurrency > 1) {
        await Promise.race([h.waitForSlot(), sleep(pause)]);
        this.deferredAt = 0;
        continue;
      }
      try {
        if (this.recoverOwnPending && (await this.recoverOwn()) > 0) continue;
        if (Date.now() >= nextReclaimAt) {
          nextReclaimAt = Date.now() + reclaimEveryMs;
          if ((await this.reclaim()) > 0) continue;
          if (h.closing()) break;
        }
        await this.readNew(Math.max(1, Math.min(h.blockMs, nextReclaimAt - Date.now())));
        errorDelay = 100;
      } catch (e) {
        if (h.closing()) break;
        if (isNoGroup(e)) {
          // The group is gone (Redis restarted without persistence, or the key was deleted).
          log.warn('consumer group missing, recreating it', { worker: h.workerId, stream: h.stream });
          await ensureGroup(h.cmd, h.stream).catch((err) => h.connectionTrouble(err));
        } else {
          h.connectionTrouble(e);
        }
        await sleep(errorDelay);
        errorDelay = Math.min(errorDelay * 2, 2000);
      }
    }
  }

  private async readNew(blockMs: number): Promise<void> {
    const h = this.host;
    const reply = (await this.conn.call('XREADGROUP', [
      'GROUP',
      GROUP,
      h.workerId,
      'COUNT',
      h.free(),
      'BLOCK',
      blockMs,
      'STREAMS',
      h.stream,
      '>',
    ])) as [string, StreamEntry[]][] | null;
    for (const [, entries] of reply ?? []) for (const [id, fields] of entries) h.start(id, fields, 1);
  }

  /** Takes over entries idle longer than the visibility timeout (their consumer died or stalled). */
  private async reclaim(): Promise<number> {
    const h = this.host;
    if (Date.now() - this.lastConsumerSweep >= 60_000) {
      this.lastConsumerSweep = Date.now();
      await sweepConsumers(h.cmd, h.stream, h.workerId);
    }
    const { cursor, entries } = await claimStalled(h.cmd, h.stream, h.workerId, h.visibilityMs, this.claimCursor, h.free());
    this.claimCursor = cursor;
    let started = 0;
    for (const [id, fields, deliveries] of entries) {
      if (h.isRunning(id)) continue; // our own entry, whose lease lapsed while we were busy
      this.startPending('job taken over from a stalled worker', [id, fields, deliveries]);
      started++;
    }
    return started;
  }

  /** Starts entries pending in our name that are not running here (their delivery reply was lost). */
  private async recoverOwn(): Promise<number> {
    const h = this.host;
    const entries = await ownPendingEntries(h.cmd, h.stream, h.workerId, h.runningCount() + 100);
    let started = 0;
    let missed = 0;
    for (const [id, fields, deliveries] of entries) {
      if (h.isRunning(id)) continue;
      if (h.free() <= 0) {
        missed++;
        continue;
      }
      this.startPending('job recovered after a lost reply', [id, fields, deliveries]);
      started++;
    }
    // Done once a pass finds nothing left over (more than a page is left to the visibility timeout).
    if (missed === 0) this.recoverOwnPending = false;
    return started;
  }

  /** Starts an entry that was pending (taken over, or ours again), saying so in the log. */
  private startPending(why: string, [id, fields, deliveries]: PendingEntry): void {
    log.info(why, { worker: this.host.workerId, entry: id, job_id: parseEnvelope(field(fields, 'job'))?.id, deliveries });
    this.host.start(id, fields, Number(deliveries));
  }
}
