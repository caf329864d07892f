import type { EventWatch, ProjectEvent, ProjectEventBus } from '../../core/events/project-events.ts';
import type { FromJobThread } from '../queue/thread-protocol.ts';

/**
 * The job thread's project events: each is handed to the HTTP thread, whose bus keeps and delivers
 * it (SSE streams, MCP waits and the console watch there). Nothing on the job thread watches.
 */
export class ThreadForwardedEvents implements ProjectEventBus {
  constructor(private readonly post: (message: FromJobThread) => void) {}

  publish(projectPk: number, event: ProjectEvent): void {
    try {
      this.post({ kind: 'event', projectPk, event });
    } catch {
      // A lost event costs a watcher a refresh, never a write.
    }
  }

  watch(_projectPk: number, _afterId: string | undefined, _watch: EventWatch): () => void {
    throw new Error('project events are watched on the HTTP thread, not on the job thread');
  }

  async close(): Promise<void> {}
}
