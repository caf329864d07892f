import type { Kernel } from '../kernel.ts';
import type { JobContext } from './queue.ts';

/** Why a job's work stopped: its project was deleted (the message a stopped evaluation shows). */
export class ProjectDeletedError extends Error {
  constructor() {
    super('the project was deleted');
    this.name = 'ProjectDeletedError';
  }
}

/**
 * Runs a job of one project with a signal that also aborts when the project is deleted — on this
 * process or any other (the deletion is a project event) — so its provider calls, pages and
 * sandboxed evaluations stop at once instead of running on for a project nobody will read. A job
 * stopped that way ends done: there is nothing to retry.
 */
export async function whileProjectLives(
  kernel: Kernel,
  projectPk: number,
  ctx: JobContext,
  run: (ctx: JobContext) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  const onJobAbort = () => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onJobAbort();
  else ctx.signal.addEventListener('abort', onJobAbort, { once: true });
  const unwatch = kernel.events.watch(projectPk, undefined, {
    onEvent: (e) => {
      if (e.event.type === 'deleted') controller.abort(new ProjectDeletedError());
    },
    onReset: () => {},
  });
  try {
    await run({ ...ctx, signal: controller.signal });
  } catch (e) {
    if (!(controller.signal.reason instanceof ProjectDeletedError)) throw e;
  } finally {
    unwatch();
    ctx.signal.removeEventListener('abort', onJobAbort);
  }
}
