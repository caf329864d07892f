import { ServiceError } from '../errors.ts';

/** How often a refused client should come back. */
const RETRY_AFTER_S = 5;

/**
 * Requests that hold a connection open for long — event streams (GET …/events) and waits
 * (GET …/wait, MCP wait_seconds) — counted per workspace and per process. Past either cap the next
 * one is a 429 with Retry-After: one workspace can hold at most its cap of this process's
 * connections, so the rest (MAX_OPEN_STREAMS less what the others hold) stays for everyone else.
 */
export class LongRequests {
  private readonly byWorkspace = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly perWorkspace: number,
    private readonly perProcess: number,
  ) {}

  /** Holds one for `workspaceId`; answers the function that lets it go (call it once). */
  take(workspaceId: string, what: 'event stream' | 'wait'): () => void {
    const held = this.byWorkspace.get(workspaceId) ?? 0;
    if (held >= this.perWorkspace || this.total >= this.perProcess) {
      const whose =
        held >= this.perWorkspace ? `this workspace has ${held} open (at most ${this.perWorkspace})` : 'the server is at its limit';
      throw new ServiceError(
        'rate_limited',
        { message: `Too many open event streams and waits: ${whose}; close one or retry in ${RETRY_AFTER_S} s`, reason: what },
        { headers: { 'retry-after': String(RETRY_AFTER_S) } },
      );
    }
    this.byWorkspace.set(workspaceId, held + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const n = (this.byWorkspace.get(workspaceId) ?? 1) - 1;
      if (n > 0) this.byWorkspace.set(workspaceId, n);
      else this.byWorkspace.delete(workspaceId);
    };
  }
}
