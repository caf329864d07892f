import type { Redis } from 'ioredis';
import { promote } from './redis-scripts.ts';

/**
 * Moves due retries from the `delayed` set back into the stream: now or when the next one is due,
 * at most every `pollMs` (another worker may have added an earlier one).
 */
export class DelayedPromoter {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private dueAt = Infinity;
  private stopped = false;

  constructor(
    private readonly cmd: Redis,
    private readonly keys: { delayed: string; stream: string },
    private readonly maxLength: number,
    private readonly pollMs: number,
    private readonly trouble: (e: unknown) => void,
  ) {}

  /** Runs a promotion within `inMs` (sooner if one is already due sooner). */
  schedule(inMs: number): void {
    if (this.stopped) return;
    const due = Date.now() + Math.min(inMs, this.pollMs);
    if (this.timer && due >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = due;
    this.timer = setTimeout(() => void this.promoteDue(), Math.max(0, due - Date.now()));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async promoteDue(): Promise<void> {
    this.timer = undefined;
    this.dueAt = Infinity;
    let next = this.pollMs;
    try {
      const batch = 100;
      const [moved, wait] = (await promote.run(this.cmd, [this.keys.delayed, this.keys.stream], [this.maxLength, batch])) as [
        number,
        number,
      ];
      if (moved === batch) next = 0;
      else if (wait >= 0) next = wait;
    } catch (e) {
      this.trouble(e);
    }
    this.schedule(next);
  }
}
