import type { BuilderRunState } from '../../ports/storage.ts';
import type { BuilderCheckpoint, Cell, Column, ExecutionLogEntry, Project } from '../../model.ts';
import type { BuilderPage, BuiltRow } from '../../plugins/plugin-types.ts';
import { rowRoom } from '../../services/quotas.ts';
import { addsRows, insertRows } from '../../services/row-insert.ts';
import { type BuilderRun, LOG_LIMIT, note } from './builder-run.ts';
import { builderLimitWarning, fittingRows, planLimitWarning } from './limits.ts';

/** What writing one page of the source led to. */
export type PageOutcome =
  /** Every row of the page was written before (a resumed run skips them): ask for the next. */
  | 'skipped'
  | 'written'
  /** A row limit was reached (`run.stopped` says which) or nothing fits: the run ends here. */
  | 'stop'
  /** The project was deleted meanwhile. */
  | 'gone';

function toCells(rows: BuiltRow[], byName: Map<string, Column>): Record<number, Cell>[] {
  return rows.map((row) => {
    const out: Record<number, Cell> = {};
    for (const [name, value] of Object.entries(row)) {
      const col = byName.get(name);
      if (col && col.type === 'input') out[col.no] = { v: value ?? null };
    }
    return out;
  });
}

/** The rows of the page not written by an earlier attempt. */
function unwrittenRows(run: BuilderRun, rows: BuiltRow[]): BuiltRow[] {
  if (run.skip <= 0) return rows;
  const dropped = Math.min(run.skip, rows.length);
  run.skip -= dropped;
  return rows.slice(dropped);
}

/**
 * How many of the page's cells may be written: only rows that add a row (a new unique key) take
 * room, under the builder's and the plan's rows per project. Past it, `run.stopped` says which stopped the run.
 */
async function fittingCells(run: BuilderRun, current: Project, columns: Column[], cells: Record<number, Cell>[]): Promise<number> {
  const { kernel, pending, builder, project } = run;
  const plan = (await kernel.storage.workspaces.get(project.workspaceId))?.plan ?? 'free';
  // `created` counts the pages still being written; the plan's room does not yet.
  const builderRoom = builder.maxRows - run.created;
  let planRoom = (await rowRoom(kernel, plan, project.pk)) - pending.rows;
  if (planRoom < cells.length && pending.rows > 0) {
    await pending.drain();
    planRoom = await rowRoom(kernel, plan, project.pk);
  }
  const room = Math.max(0, Math.min(builderRoom, planRoom));
  const fits = fittingRows(await addsRows(kernel, current, columns, cells), room);
  // The source holds more than may be written: keep what fits, then stop and say so.
  if (fits < cells.length) {
    run.stopped = builderRoom <= planRoom ? builderLimitWarning(builder, run.created + room) : planLimitWarning(plan, run.created + room);
  }
  return fits;
}

/** The run's state once a page of `added` rows committed: progress, checkpoint (over the last one) and its log line. */
function pageState(run: BuilderRun, page: BuilderPage, offered: number, added: number) {
  const after = { pages: run.pages + 1, created: run.created + added };
  const skipped = offered - added;
  const entry: ExecutionLogEntry = {
    at: new Date().toISOString(),
    step: 'page',
    message: `page ${after.pages}: ${added} rows written${skipped ? `, ${skipped} already in the project (unique key)` : ''}`,
    page: after.pages,
    rows: added,
    total_rows: after.created,
  };
  const checkpoint: BuilderCheckpoint = {
    rows_created: after.created,
    pages: after.pages,
    ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    ...run.scoped,
  };
  const state: BuilderRunState = {
    builderStatus: 'running',
    builderProgress: { rows_created: after.created, target: run.target },
    checkpoint,
    checkpointWas: run.lastCheckpoint,
    log: [...run.logEntries, entry].slice(-LOG_LIMIT),
  };
  return { after, entry, checkpoint, state };
}

/**
 * Writes one page of the source with the run's checkpoint. A page goes in beside the ones before it
 * (PageWrites) only when it reads nothing they write (no unique key to check) and starts no jobs;
 * otherwise they commit first. A page refused (a value over MAX_CELL_BYTES) is neither counted nor
 * paid; rows whose unique key the project holds are not written, so neither counted nor paid.
 */
export async function writePage(run: BuilderRun, page: BuilderPage): Promise<PageOutcome> {
  const { kernel, pending, project } = run;
  let rows = unwrittenRows(run, page.rows);
  if (rows.length === 0) return 'skipped';
  // Read again for each page: the project may have been deleted, or its unique key set, meanwhile.
  const current = await kernel.storage.projects.getByPk(project.pk);
  if (!current) return 'gone';
  const columns = await kernel.storage.projects.columns(project.pk);
  const beside = current.settings.uniqueColumns.length === 0 && !columns.some((c) => c.type === 'tool' && c.autoRun);
  if (!beside) await pending.drain();
  let cells = toCells(rows, new Map(columns.map((c) => [c.name, c])));
  const fits = await fittingCells(run, current, columns, cells);
  cells = cells.slice(0, fits);
  rows = rows.slice(0, fits);
  if (cells.length === 0) return 'stop';
  let written: ReturnType<typeof pageState> | undefined;
  if (beside) {
    // Written beside the pages before it; its state follows theirs (BuilderRunState.after).
    written = pageState(run, page, rows.length, cells.length);
    const { state } = written;
    await pending.add(cells.length, (after) =>
      insertRows(kernel, current, columns, cells, { builderState: { ...state, ...(after ? { after } : {}) } }),
    );
  } else {
    await insertRows(kernel, current, columns, cells, {
      builderState: (added: number) => {
        written = pageState(run, page, rows.length, added);
        return written.state;
      },
    });
    pending.wrote((written as NonNullable<typeof written>).after.created - run.created);
  }
  const done = written as NonNullable<typeof written>;
  run.lastCheckpoint = done.checkpoint;
  note(run, done.entry);
  run.pages = done.after.pages;
  run.created = done.after.created;
  return run.stopped ? 'stop' : 'written';
}

/** A page as the plugin yielded it: a bare array of rows, or a page with a cursor. */
export const asPage = (p: BuiltRow[] | BuilderPage): BuilderPage => (Array.isArray(p) ? { rows: p } : p);
