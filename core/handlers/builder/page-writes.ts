/**
 * The pages of a builder run being written at once (at most `lanes`, the storage's bulkLanes).
 * Each new page's rows go in beside the pages before it, and its state commits after theirs: the
 * write gets `after`, the previous page's write, and waits for it inside its transaction before
 * writing the checkpoint (BuilderRunState.after). Adding a page past `lanes` waits for the oldest.
 *
 * That wait happens while the page holds the locks of the rows it inserted, which the database
 * does not see as a wait: a third writer queued on those locks, and holding one the previous page
 * needs, would make a cycle only the database's lock timeout ends. So the wait is bounded: past
 * `waitMs`, `after` rejects with PageWaitedTooLong, the page rolls back (its locks go), waits for
 * the previous page outside any transaction, and is written again.
 */
export class PageWaitedTooLong extends Error {
  override name = 'PageWaitedTooLong';
  constructor(ms: number) {
    super(`the previous page was still being written after ${ms} ms`);
  }
}

/** How long a page's transaction waits for the page before it (a page of 5,000 rows takes about a second). */
export const PAGE_WAIT_MS = 5_000;

export class PageWrites {
  private readonly writes: { done: Promise<void>; rows: number }[] = [];

  /** `committed`, `committedPages`: what the run had written when this attempt began. */
  constructor(
    private readonly lanes: number,
    public committed: number,
    public committedPages: number,
    private readonly waitMs = PAGE_WAIT_MS,
  ) {}

  /** Rows of pages not yet committed. */
  get rows(): number {
    return this.writes.reduce((n, w) => n + w.rows, 0);
  }

  /** A page written in line (not beside others) has committed `rows`. */
  wrote(rows: number): void {
    this.committed += rows;
    this.committedPages++;
  }

  /**
   * Starts a page's write (`after`: the write it must commit after, if any); returns once at most
   * `lanes` pages are under way.
   */
  async add(rows: number, write: (after: Promise<unknown> | undefined) => Promise<unknown>): Promise<void> {
    const previous = this.writes[this.writes.length - 1]?.done;
    const attempt = async () => {
      try {
        await write(previous && this.bounded(previous));
      } catch (e) {
        if (!(e instanceof PageWaitedTooLong) || !previous) throw e;
        await previous;
        await write(undefined);
      }
      this.wrote(rows);
    };
    const done = attempt();
    // Its failure is met by whoever waits for it (drain), or by the page after it.
    done.catch(() => {});
    this.writes.push({ done, rows });
    while (this.writes.length >= this.lanes) await this.writes.shift()?.done;
  }

  /** Waits until every page under way has committed; the first failure is thrown. */
  async drain(): Promise<void> {
    while (this.writes.length) await this.writes.shift()?.done;
  }

  /** Waits until every page under way has ended, whichever way. */
  async settle(): Promise<void> {
    await this.drain().catch(() => {});
    this.writes.length = 0;
  }

  /** `previous`, or PageWaitedTooLong once it has taken `waitMs`. */
  private bounded(previous: Promise<void>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PageWaitedTooLong(this.waitMs)), this.waitMs);
    });
    const bounded = Promise.race([previous, late]).finally(() => clearTimeout(timer));
    // A page that fails before it waits never reads it.
    bounded.catch(() => {});
    return bounded;
  }
}
