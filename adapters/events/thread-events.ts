import type { EventWatch, ProjectEvent, ProjectEventBus } from '../../core/ports/project-events.ts';
import { InProcessProjectEvents } from './in-process-events.ts';

/**
 * Project events of the embedded mode's two threads (the request thread and the job thread): each
 * thread keeps and delivers events on its own bus — SSE streams and MCP waits watch on the request
 * thread, running jobs watch for their project's deletion on the job thread — and hands what it
 * publishes to the other thread (`send`), which delivers it as it comes (`receive`) without
 * sending it back.
 */
export class LinkedProjectEvents implements ProjectEventBus {
  private readonly local = new InProcessProjectEvents();
  private send: (projectPk: number, event: ProjectEvent) => void = () => {};

  /** Where this thread's events go: the other thread (set once it runs). */
  linkTo(send: (projectPk: number, event: ProjectEvent) => void): void {
    this.send = send;
  }

  publish(projectPk: number, event: ProjectEvent): void {
    this.local.publish(projectPk, event);
    try {
      this.send(projectPk, event);
    } catch {
      // A lost event costs a watcher a refresh, never a write.
    }
  }

  /** An event the other thread published. */
  receive(projectPk: number, event: ProjectEvent): void {
    this.local.publish(projectPk, event);
  }

  watch(projectPk: number, afterId: string | undefined, watch: EventWatch): () => void {
    return this.local.watch(projectPk, afterId, watch);
  }

  close(): Promise<void> {
    return this.local.close();
  }
}
