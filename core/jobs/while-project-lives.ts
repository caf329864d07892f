import type { Kernel } from '../kernel.ts';
import type { JobContext } from '../ports/queue.ts';

/** Why a job's work stopped: its project was deleted (the message a stopped evaluation shows). */
export class ProjectDeletedError extends Error {
  constructor(what = 'the project') {
    super(`${what} was deleted`);
    this.name = 'ProjectDeletedError';
  }
}

/**
 * Runs a job of one project (and, given `colNo`, of one column) with a signal that also aborts when
 * the project or that column is deleted — on this
 * process or any other (the deletion is a project event) — so its provider calls, pages and
 * sandboxed evaluations stop at once instead of running on for a project nobody will read. A job
 * stopped that way ends done: there is nothing to retry.
 */
export async function whileProjectLives(
  kernel: Kernel,
  projectPk: number,
  ctx: JobContext,
  run: (ctx: JobContext) => Promise<void>,
  colNo?: number,
): Promise<void> {
  const controller = new AbortController();
  const onJobAbort = () => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onJobAbort();
  else ctx.signal.addEventListener('abort', onJobAbort, { once: true });
  const unwatch = kernel.events.watch(projectPk, undefined, {
    onEvent: (e) => {
      if (e.event.type !== 'deleted') return;
      if (e.event.colNo === undefined) controller.abort(new ProjectDeletedError());
      else if (e.event.colNo === colNo) controller.abort(new ProjectDeletedError('the column'));
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
