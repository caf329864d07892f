import type { Kernel } from '../kernel.ts';
import { type Project, TOOL_CELL_STATUSES } from '../model.ts';

type ToolCellStatus = (typeof TOOL_CELL_STATUSES)[number];

/** Where one tool column stands: its live rows' cells by status (`failed` is `error` again, as run mode "failed" names it). */
export type ColumnProgress = { col_id: string; total: number; failed: number } & Record<ToolCellStatus, number>;

/** Projects whose last answer a process remembers (oldest forgotten first). */
const REMEMBERED_PROJECTS = 2_000;

/** Per storage (one per kernel: tests run several in one process), per project: the last answer and what it was counted at. */
const remembered = new WeakMap<object, Map<number, { at: string; columns: ColumnProgress[] }>>();

/**
 * GET /projects/{id}/columns/progress: every tool column's cells by status, over the live rows.
 * One grouped count of the project's cell keys (no counter is kept on the enrichment's write path),
 * remembered per process under the project's change counter (`rows.version`, which every write of
 * rows or cells moves) and its tool columns: asked again while nothing changed, it costs the read of
 * the counter. The counter is read before the count, so a count never stands for a later state than its own.
 */
export async function columnProgress(kernel: Kernel, project: Project): Promise<{ columns: ColumnProgress[] }> {
  const version = await kernel.storage.rows.version(project.pk);
  const tools = (await kernel.storage.projects.columns(project)).filter((c) => c.type === 'tool');
  const at = `${version}:${tools.map((c) => `${c.no}=${c.id}`).join(',')}`;
  let byProject = remembered.get(kernel.storage.rows);
  if (!byProject) {
    byProject = new Map();
    remembered.set(kernel.storage.rows, byProject);
  }
  const known = byProject.get(project.pk);
  if (known?.at === at) return { columns: known.columns };
  const counts = await kernel.storage.rows.statusCounts(
    project.pk,
    tools.map((c) => c.no),
  );
  const columns = tools.map((c) => {
    const progress = { col_id: c.id, total: 0, failed: 0, ...Object.fromEntries(TOOL_CELL_STATUSES.map((s) => [s, 0])) } as ColumnProgress;
    for (const { status, cells } of counts.filter((n) => n.colNo === c.no)) {
      progress.total += cells;
      if ((TOOL_CELL_STATUSES as readonly string[]).includes(status)) progress[status as ToolCellStatus] += cells;
    }
    progress.failed = progress.error;
    return progress;
  });
  byProject.delete(project.pk);
  byProject.set(project.pk, { at, columns });
  if (byProject.size > REMEMBERED_PROJECTS) byProject.delete(byProject.keys().next().value as number);
  return { columns };
}
