import {
  compareEventIds,
  EVENTS_KEPT,
  FROM_START,
  type EventWatch,
  type ProjectEvent,
  type ProjectEventBus,
  type StoredEvent,
} from '../../core/ports/project-events.ts';

/** The embedded default: events of this process, the last EVENTS_KEPT per project kept for resuming. */
export class InProcessProjectEvents implements ProjectEventBus {
  private readonly kept = new Map<number, StoredEvent[]>();
  private readonly watchers = new Map<number, Set<EventWatch>>();
  private lastMs = 0;
  private seq = 0;

  private nextId(): string {
    const now = Date.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.seq = 0;
    } else this.seq++;
    return `${this.lastMs}-${this.seq}`;
  }

  publish(projectPk: number, event: ProjectEvent): void {
    const stored = { id: this.nextId(), event };
    const list = this.kept.get(projectPk) ?? [];
    list.push(stored);
    if (list.length > EVENTS_KEPT) list.splice(0, list.length - EVENTS_KEPT);
    this.kept.set(projectPk, list);
    for (const w of this.watchers.get(projectPk) ?? []) w.onEvent(stored);
  }

  watch(projectPk: number, afterId: string | undefined, watch: EventWatch): () => void {
    if (afterId !== undefined) {
      const list = this.kept.get(projectPk) ?? [];
      const oldest = list[0];
      // Before everything kept (trimmed, or published by an earlier run of the process): events were missed.
      if (afterId !== FROM_START && (!oldest || compareEventIds(afterId, oldest.id) < 0)) watch.onReset();
      else for (const e of list) if (compareEventIds(e.id, afterId) > 0) watch.onEvent(e);
    }
    const set = this.watchers.get(projectPk) ?? new Set();
    set.add(watch);
    this.watchers.set(projectPk, set);
    return () => {
      set.delete(watch);
      if (set.size === 0) this.watchers.delete(projectPk);
    };
  }

  async close(): Promise<void> {
    this.watchers.clear();
  }
}
