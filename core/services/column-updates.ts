import { columnNameProblems } from '../columns/column-names.ts';
import { columnSteps, columnsReadBy } from '../columns/column-steps.ts';
import { columnView } from '../columns/column-view.ts';
import { expressionReads } from '../columns/run-condition.ts';
import { referencedColumns, renameTemplates } from '../columns/templates.ts';
import { type FieldError, quoted, ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Column, Project, WaterfallStep } from '../model.ts';
import type { ColumnUpdate } from '../ports/storage.ts';
import { checkStep, conditionProblems, configSizeProblems, refuseColumnProblems } from './columns.ts';

/** PATCH …/columns/{col_id}: what may change (every field optional, at least one given). */
export interface UpdateColumnInput {
  name?: string;
  config?: Record<string, unknown>;
  auto_run?: boolean;
  run_condition?: string | null;
}

/** Attempts of an update whose columns another change keeps moving under it. */
const ATTEMPTS = 3;

const names = (list: string[]) => list.map((n) => quoted(n)).join(', ');

/** The other tool columns that read `name` as a field of a JSONata expression: their run condition or a row expression of their tools. */
function expressionReaders(kernel: Kernel, columns: Column[], column: Column, name: string): string[] {
  return columns
    .filter((c) => c.no !== column.no && c.type === 'tool')
    .filter((c) => {
      if (c.runCondition && expressionReads(c.runCondition, name)) return true;
      return columnSteps(c).some((step) =>
        (kernel.plugins.tool(step.tool_id)?.rowExpressions ?? []).some((field) => {
          const expression = step.config[field];
          return typeof expression === 'string' && expressionReads(expression, name);
        }),
      );
    })
    .map((c) => c.name);
}

/** A rename: refused while another column's expression reads the old name; the `{{Old Name}}` templates of the others rewritten. */
function renaming(kernel: Kernel, columns: Column[], column: Column, name: string, errors: FieldError[]): ColumnUpdate['rewritten'] {
  errors.push(...columnNameProblems([name], columns.length - 1, 'name'));
  if (columns.some((c) => c.no !== column.no && c.name === name)) {
    throw new ServiceError('conflict', `Another column of this project is named "${name}": choose another name`);
  }
  const readers = columns.filter((c) => c.no !== column.no && c.type === 'tool' && columnsReadBy(c).has(column.name));
  if (readers.length && (/[{}]/.test(name) || name.trim() !== name)) {
    errors.push({
      path: 'name',
      message: `${names(readers.map((c) => c.name))} read${readers.length === 1 ? 's' : ''} this column through {{${column.name}}}: its name cannot hold { or } or begin or end with blanks`,
    });
  }
  const expressions = expressionReaders(kernel, columns, column, column.name);
  if (expressions.length) {
    throw new ServiceError('conflict', {
      message: `${names(expressions)} read${expressions.length === 1 ? 's' : ''} "${column.name}" as a field of ${expressions.length === 1 ? 'its' : 'their'} run_condition or expression: edit ${expressions.length === 1 ? 'it' : 'them'} first (update_column), then rename. Nothing was changed.`,
      read_by: expressions,
    });
  }
  return readers.map((c) => ({
    colNo: c.no,
    config: renameTemplates(c.config, column.name, name),
    waterfall: c.waterfall
      ? c.waterfall.map((s) => ({ ...s, config: renameTemplates(s.config, column.name, name) as Record<string, unknown> }))
      : null,
  }));
}

/** Whether `from` reaches `to` through the columns' {{templates}} (a column waits for the tool columns it reads). */
function reads(columns: Column[], from: Column, to: Column, seen = new Set<number>()): boolean {
  if (from.no === to.no) return true;
  if (seen.has(from.no) || from.type !== 'tool') return false;
  seen.add(from.no);
  const read = columnsReadBy(from);
  return columns.some((c) => read.has(c.name) && reads(columns, c, to, seen));
}

/** A new config (of the first step of a waterfall), checked as create_column checks it; no column may end up reading itself. */
function configuring(kernel: Kernel, columns: Column[], column: Column, config: Record<string, unknown>, errors: FieldError[]) {
  const steps: WaterfallStep[] = columnSteps(column).map((s, i) => (i === 0 ? { ...s, config } : s));
  const others = columns.filter((c) => c.no !== column.no);
  const refs = referencedColumns(config);
  if (refs.has(column.name)) {
    errors.push({ path: 'config', message: `reads {{${column.name}}}, the column itself: a column cannot read its own value` });
  }
  checkStep(kernel, steps[0] as WaterfallStep, '', new Set(others.map((c) => c.name)), errors);
  errors.push(...configSizeProblems(steps, 'config'));
  const loop = others.filter((c) => refs.has(c.name) && reads(columns, c, column));
  if (loop.length) {
    errors.push({
      path: 'config',
      message: `reads ${names(loop.map((c) => c.name))}, which read${loop.length === 1 ? 's' : ''} this column: the two would wait for each other`,
    });
  }
  return { config, waterfall: column.waterfall ? steps : undefined };
}

/** The update asked for, checked against the project's columns as they are: 404, 422 or 409 before anything changes. */
function plan(kernel: Kernel, columns: Column[], colId: string, input: UpdateColumnInput): { column: Column; update: ColumnUpdate } {
  const column = columns.find((c) => c.id === colId);
  if (!column) throw new ServiceError('not_found', `Column ${colId} not found in this project (list_columns names them)`);
  const tool = (['config', 'auto_run', 'run_condition'] as const).filter((f) => input[f] !== undefined);
  if (column.type === 'input' && tool.length) {
    throw validationError(
      `"${column.name}" is an input column: input columns have no tool settings (${tool.join(', ')}); only their name can change`,
      tool.map((path) => ({ path, message: 'is a tool column setting; this is an input column' })),
    );
  }
  if (input.name === undefined && tool.length === 0) {
    throw validationError('Nothing to change: give name, or for a tool column config, auto_run or run_condition', [
      { path: '', message: 'must hold at least one of name, config, auto_run, run_condition' },
    ]);
  }
  const errors: FieldError[] = [];
  const update: ColumnUpdate = { colNo: column.no };
  if (input.name !== undefined && input.name !== column.name) {
    update.name = input.name;
    update.rewritten = renaming(kernel, columns, column, input.name, errors);
  }
  if (input.config !== undefined) {
    const { config, waterfall } = configuring(kernel, columns, column, input.config, errors);
    update.config = config;
    if (waterfall) update.waterfall = waterfall;
  }
  if (input.run_condition !== undefined) {
    errors.push(...conditionProblems(input.run_condition));
    update.runCondition = input.run_condition || null;
  }
  if (input.auto_run !== undefined) update.autoRun = input.auto_run;
  refuseColumnProblems(errors);
  return { column, update };
}

/**
 * PATCH /projects/{id}/columns/{col_id}: renames a column or changes a tool column's config,
 * auto_run or run_condition. Cells are stored by column number, so every value stays; the unique
 * key's names and other columns' `{{Old Name}}` templates follow a rename in the same transaction;
 * saved filters name columns by col_id and keep working. Cells already filled are not run again.
 * A project event (`columns`) tells every process and watcher.
 */
export async function updateColumn(kernel: Kernel, project: Project, colId: string, input: UpdateColumnInput) {
  let current: Project | undefined = project;
  for (let attempt = 1; attempt <= ATTEMPTS && current; attempt++) {
    const columns = await kernel.storage.projects.columns(current);
    const { update } = plan(kernel, columns, colId, input);
    const outcome = await kernel.storage.projects.updateColumn(current.pk, current.columnsVersion, update);
    if (outcome === 'gone') break;
    if (outcome !== 'moved') return columnView(outcome.column, kernel.plugins);
    current = await kernel.storage.projects.getByPk(project.pk);
  }
  if (!current) throw new ServiceError('not_found', 'Project not found (deleted meanwhile)');
  const exists = (await kernel.storage.projects.columns(current.pk)).some((c) => c.id === colId);
  if (!exists) throw new ServiceError('not_found', `Column ${colId} not found in this project (deleted meanwhile)`);
  throw new ServiceError('conflict', 'The project’s columns kept changing while this update was made: nothing was changed, send it again');
}
