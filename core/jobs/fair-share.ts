/** The key of a job that names no workspace (jobs stored before tenants, resumed score runs): one lane of their own. */
export const NO_TENANT = '';

/**
 * How job slots are shared between workspaces (one rule for every queue): a workspace runs up to
 * its share of a process's slots at once (JOB_WORKSPACE_SHARE of WORKER_CONCURRENCY, at least one);
 * past it, it may still use idle slots, but never the last free one, which stays for a workspace
 * under its share. So a workspace that floods the queue leaves a slot for the next one to arrive,
 * and one working alone still uses all but one slot (JOB_WORKSPACE_SHARE=1 gives it every slot, and
 * no shares). Jobs that name no workspace (NO_TENANT: the host's own) are not shared out.
 */
export function mayStart(tenantRunning: number, totalRunning: number, concurrency: number, share: number, tenant?: string): boolean {
  if (tenant === NO_TENANT || tenantRunning < shareSlots(concurrency, share)) return true;
  return totalRunning < concurrency - 1;
}

/** The slots one workspace may hold whatever else runs. */
export function shareSlots(concurrency: number, share: number): number {
  return Math.max(1, Math.floor(concurrency * share));
}

/**
 * Waiting jobs in one lane per workspace, taken in turn: the next job is the oldest of the next
 * workspace (round robin) that `mayStart` lets run. Taking costs the number of waiting workspaces,
 * not of waiting jobs, so a flood of one workspace does not slow the choice.
 */
export class FairLanes<T> {
  /** Each lane: its items from `head` on (taking moves the head; the array is compacted now and then). */
  private readonly lanes = new Map<string, { items: T[]; head: number }>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(tenant: string | undefined, item: T): void {
    const key = tenant ?? NO_TENANT;
    const lane = this.lanes.get(key);
    if (lane) lane.items.push(item);
    else this.lanes.set(key, { items: [item], head: 0 });
    this.count++;
  }

  /** The next job that may start (its lane moves to the back of the turn), or undefined. */
  take(may: (tenant: string) => boolean): T | undefined {
    for (const [tenant, lane] of this.lanes) {
      if (!may(tenant)) continue;
      const item = lane.items[lane.head] as T;
      lane.head++;
      this.lanes.delete(tenant);
      if (lane.head < lane.items.length) {
        if (lane.head >= 1024 && lane.head * 2 >= lane.items.length) {
          lane.items = lane.items.slice(lane.head);
          lane.head = 0;
        }
        this.lanes.set(tenant, lane); // to the back of the turn
      }
      this.count--;
      return item;
    }
    return undefined;
  }

  /** Every waiting job, emptying the lanes. */
  drain(): T[] {
    const all = [...this.lanes.values()].flatMap((lane) => lane.items.slice(lane.head));
    this.lanes.clear();
    this.count = 0;
    return all;
  }
}

/** Running jobs per workspace: what `mayStart` weighs a workspace's next job against. */
export class TenantCounts {
  private readonly counts = new Map<string, number>();

  of(tenant: string | undefined): number {
    return this.counts.get(tenant ?? NO_TENANT) ?? 0;
  }

  add(tenant: string | undefined): void {
    const key = tenant ?? NO_TENANT;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  remove(tenant: string | undefined): void {
    const key = tenant ?? NO_TENANT;
    const n = (this.counts.get(key) ?? 1) - 1;
    if (n > 0) this.counts.set(key, n);
    else this.counts.delete(key);
  }

  clear(): void {
    this.counts.clear();
  }
}
