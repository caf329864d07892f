import type { CellStatus, Project } from '../model.ts';

/**
 * What changed in a project, pushed to whoever watches it (GET /projects/{id}/events, the
 * console's live table; docs/console.md). Published by whichever process made the change —
 * an API process, a worker — after the write committed; delivered to watchers in every process.
 */
export type ProjectEvent =
  /** Cells of one column: results written (value, status, error) or statuses moved (queued, running…). */
  | { type: 'cells'; colNo: number; cells: { seq: number; status: CellStatus; value?: unknown; error?: string | null }[] }
  | { type: 'rows'; added: number; deleted: number }
  | { type: 'builder'; status: Project['builderStatus']; progress: Project['builderProgress'] | null; error: string | null }
  | { type: 'columns' }
  /**
   * The project was deleted (its streams end), or with `colNo` one of its columns: every process
   * stops the work it runs for it.
   */
  | { type: 'deleted'; colNo?: number };

/** An event with its id: ids increase, and `Last-Event-ID` resumes after one. */
export interface StoredEvent {
  id: string;
  event: ProjectEvent;
}

export interface EventWatch {
  /** Called with each event after the watch's start, in order. */
  onEvent(e: StoredEvent): void;
  /** The events after the asked id are no longer kept: the watcher must read the project again. */
  onReset(): void;
}

export interface ProjectEventBus {
  /** Publishes after a commit. Never throws: a lost event costs a watcher a refresh, never a write. */
  publish(projectPk: number, event: ProjectEvent): void;
  /**
   * Watches a project from after `afterId` (kept events first; FROM_START: all that are kept), or
   * from now; answers how to stop.
   */
  watch(projectPk: number, afterId: string | undefined, watch: EventWatch): () => void;
  close(): Promise<void>;
}

/** Events kept per project for resuming (Last-Event-ID). */
export const EVENTS_KEPT = 1_000;

/** Stream ids `<ms>-<n>` (Redis's form), compared as such. */
export function compareEventIds(a: string, b: string): number {
  const [am = 0, an = 0] = a.split('-').map(Number);
  const [bm = 0, bn = 0] = b.split('-').map(Number);
  return am - bm || an - bn;
}

export const isEventId = (s: string): boolean => /^\d{1,16}-\d{1,16}$/.test(s);

/** `Last-Event-ID: 0-0` asks for every event still kept (a watcher of a project it just created). */
export const FROM_START = '0-0';
