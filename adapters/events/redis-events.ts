import type { Redis } from 'ioredis';
import {
  compareEventIds,
  EVENTS_KEPT,
  type EventWatch,
  FROM_START,
  type ProjectEvent,
  type ProjectEventBus,
  type StoredEvent,
} from '../../core/ports/project-events.ts';
import { log } from '../../core/log.ts';

/** A project's event stream lives this long after its last event (then Redis forgets it). */
const STREAM_TTL_MS = 7 * 24 * 3600_000;
/** How long one blocking read waits; a new watch interrupts it (CLIENT UNBLOCK). */
const BLOCK_MS = 5_000;

interface Watched {
  /** The loop reads this stream after this id. */
  position: string;
  watchers: Map<EventWatch, { last: string }>;
}

type Entry = [id: string, fields: string[]];

const parse = ([id, fields]: Entry): StoredEvent | undefined => {
  try {
    return { id, event: JSON.parse(fields[1] ?? 'null') as ProjectEvent };
  } catch {
    return undefined;
  }
};

/**
 * Project events through Redis Streams, so that a worker's results reach a console watching through
 * an API process: one stream per project (`<prefix>:events:<pk>`, about the last EVENTS_KEPT
 * events; the stream id is the event id), one blocking reader per process serving every watch it
 * holds. Publishing never blocks a write: with Redis away the event is dropped (and logged).
 */
export class RedisProjectEvents implements ProjectEventBus {
  private readonly watched = new Map<number, Watched>();
  private readerId: number | undefined;
  private closed = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void>;
  private warned = false;

  constructor(
    private readonly redis: Redis,
    /** A connection of its own: it spends its time in blocking reads. */
    private readonly reader: Redis,
    private readonly prefix = 'wfs',
  ) {
    // A reconnection (Redis restarted, Sentinel failed over) gives the reader another client id.
    reader.on('close', () => {
      this.readerId = undefined;
    });
    this.loop = this.run();
  }

  private key(pk: number): string {
    return `${this.prefix}:events:${pk}`;
  }

  publish(projectPk: number, event: ProjectEvent): void {
    const key = this.key(projectPk);
    this.redis
      .multi()
      .xadd(key, 'MAXLEN', '~', String(EVENTS_KEPT), '*', 'e', JSON.stringify(event))
      .pexpire(key, STREAM_TTL_MS)
      .exec()
      .then(() => {
        this.warned = false;
      })
      .catch((e) => {
        if (!this.warned) log.warn('project events are not published while Redis is away', { error: (e as Error).message });
        this.warned = true;
      });
  }

  watch(projectPk: number, afterId: string | undefined, watch: EventWatch): () => void {
    let stopped = false;
    const start = async () => {
      const key = this.key(projectPk);
      const [newest] = (await this.redis.xrevrange(key, '+', '-', 'COUNT', 1)) as Entry[];
      let last = newest?.[0] ?? '0-0';
      if (afterId !== undefined) {
        const [oldest] = (await this.redis.xrange(key, '-', '+', 'COUNT', 1)) as Entry[];
        if (afterId !== FROM_START && (!oldest || compareEventIds(afterId, oldest[0]) < 0)) watch.onReset();
        else {
          const missed = (await this.redis.xrange(key, `(${afterId}`, last, 'COUNT', EVENTS_KEPT)) as Entry[];
          for (const entry of missed) {
            const e = parse(entry);
            if (e && !stopped) watch.onEvent(e);
          }
        }
      }
      if (stopped) return;
      const w = this.watched.get(projectPk) ?? { position: last, watchers: new Map() };
      if (compareEventIds(last, w.position) < 0) last = w.position;
      w.watchers.set(watch, { last });
      this.watched.set(projectPk, w);
      this.interrupt();
    };
    start().catch((e) => {
      log.warn('a project event watch could not start', { error: (e as Error).message });
      if (!stopped) watch.onReset();
    });
    return () => {
      stopped = true;
      const w = this.watched.get(projectPk);
      w?.watchers.delete(watch);
      if (w && w.watchers.size === 0) this.watched.delete(projectPk);
    };
  }

  /** Ends the reader's current blocking read, so it reads the new set of streams. */
  private interrupt(): void {
    this.wake?.();
    if (this.readerId !== undefined) this.redis.client('UNBLOCK', this.readerId).catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      if (this.watched.size === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      try {
        this.readerId ??= Number(await this.reader.client('ID'));
        const pks = [...this.watched.keys()];
        const positions = pks.map((pk) => this.watched.get(pk)?.position ?? '$');
        const answer = (await this.reader.xread(
          'COUNT',
          500,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          ...pks.map((pk) => this.key(pk)),
          ...positions,
        )) as [string, Entry[]][] | null;
        for (const [key, entries] of answer ?? []) this.deliver(Number(key.slice(key.lastIndexOf(':') + 1)), entries);
      } catch (e) {
        if (this.closed) return;
        // Redis away: watchers keep their connection; the read starts again where it was.
        this.readerId = undefined;
        log.debug('project events reader waits for Redis', { error: (e as Error).message });
        await Bun.sleep(500);
      }
    }
  }

  private deliver(pk: number, entries: Entry[]): void {
    const w = this.watched.get(pk);
    if (!w) return;
    for (const entry of entries) {
      w.position = entry[0];
      const e = parse(entry);
      if (!e) continue;
      for (const [watch, state] of w.watchers) {
        if (compareEventIds(e.id, state.last) <= 0) continue;
        state.last = e.id;
        watch.onEvent(e);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watched.clear();
    this.wake?.();
    this.reader.disconnect();
    this.redis.disconnect();
    await this.loop.catch(() => undefined);
  }
}
