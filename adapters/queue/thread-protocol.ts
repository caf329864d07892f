import type { Config } from '../../core/config.ts';
import type { ProjectEvent } from '../../core/ports/project-events.ts';

/**
 * Messages between the HTTP thread and the job thread of the embedded mode (SQLite, no Redis): the
 * job thread owns the in-process queue and its own SQLite connection; the HTTP thread reaches the
 * queue through these calls and hears the jobs' project events.
 */

/** The queue methods the HTTP thread calls on the job thread's queue. */
export type ThreadCallMethod = 'enqueue' | 'stats' | 'drain' | 'listDead' | 'retryDead' | 'close';

/** HTTP thread → job thread. */
export type ToJobThread =
  | { kind: 'init'; config: Config }
  | { kind: 'call'; id: number; method: ThreadCallMethod; args: unknown[] }
  | { kind: 'event'; projectPk: number; event: ProjectEvent };

/** Job thread → HTTP thread. */
export type FromJobThread =
  | { kind: 'ready'; workerId: string }
  | { kind: 'failed'; error: string }
  | { kind: 'reply'; id: number; ok: true; value: unknown }
  | { kind: 'reply'; id: number; ok: false; error: string }
  | { kind: 'event'; projectPk: number; event: ProjectEvent };
