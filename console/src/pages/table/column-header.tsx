import type { IHeaderComp, IHeaderParams } from 'ag-grid-community';
import { render } from 'preact';
import type { Answer } from '../../api-shapes.ts';
import type { signal } from '../../signal.ts';
import type { Column } from './table-types.ts';

/** How far a tool column is (GET …/columns/progress): cells by status. */
export type ColumnProgress = Answer<'get_column_progress'>['columns'][number];

/** What every header reads from the page: the sort, the columns' progress, the tools' names, and where a click goes. */
export interface HeaderContext {
  sort$: ReturnType<typeof signal<{ col_id: string; direction: 'asc' | 'desc' }[]>>;
  progress$: ReturnType<typeof signal<Map<string, ColumnProgress>>>;
  toolName(toolId: string | null | undefined): string | undefined;
  /** A click on the name: ascending, then descending, then no sort. */
  onSortClick(column: Column): void;
  onMenu(column: Column, anchor: HTMLElement): void;
}

const n = (x: number | string | undefined) => (typeof x === 'number' ? x : 0);

/** Cells that ended, with or without a value, and those that ended in error. */
export function progressFigures(p: ColumnProgress) {
  const failed = n(p.error); // (`failed` repeats `error`: the cells a "failed" re-run takes)
  const working = n(p.queued) + n(p.running);
  const done = p.total - n(p.pending) - working - n(p.insufficient_credits);
  return { done: Math.max(0, done), failed, working, total: p.total };
}

function Progress({ p }: { p: ColumnProgress }) {
  const f = progressFigures(p);
  const label = `${f.done.toLocaleString()} of ${f.total.toLocaleString()} done${f.failed ? `, ${f.failed.toLocaleString()} failed` : ''}${
    f.working ? `, ${f.working.toLocaleString()} running` : ''
  }`;
  return (
    <span class="col-progress" title={label}>
      <progress max={f.total || 1} value={f.done} aria-label={label} />
      <span class="col-progress-text" data-testid="column-progress">
        {f.done.toLocaleString()}/{f.total.toLocaleString()}
        {f.failed > 0 && <span class="col-progress-failed"> · {f.failed.toLocaleString()} failed</span>}
      </span>
    </span>
  );
}

function Header({ column, ctx }: { column: Column; ctx: HeaderContext }) {
  const sort = ctx.sort$.use().find((s) => s.col_id === column.col_id);
  const progress = ctx.progress$.use().get(column.col_id);
  const tool = column.type === 'tool' ? (ctx.toolName(column.tool_id) ?? column.tool_id ?? 'tool') : undefined;
  return (
    <div class={`col-header${tool ? ' col-header-tool' : ''}`}>
      <div class="col-header-line">
        <button type="button" class="col-name" title={`Sort by ${column.name}`} onClick={() => ctx.onSortClick(column)}>
          {tool && (
            <span class="col-icon" aria-hidden="true">
              ƒ
            </span>
          )}
          <span class="col-title">{column.name}</span>
          {sort && <span aria-hidden="true">{sort.direction === 'asc' ? ' ▲' : ' ▼'}</span>}
          {sort && <span class="sr-only"> (sorted {sort.direction === 'asc' ? 'ascending' : 'descending'})</span>}
        </button>
        <button
          type="button"
          class="col-menu-button"
          aria-label={`Column menu of ${column.name}`}
          aria-haspopup="menu"
          onClick={(e) => ctx.onMenu(column, e.currentTarget as HTMLElement)}
        >
          ⋮
        </button>
      </div>
      {tool && (
        <div class="col-header-tool-line">
          <span class="col-tool-name">{tool}</span>
          {progress && <Progress p={progress} />}
        </div>
      )}
    </div>
  );
}

/** AG Grid's header component for the table's columns: a Preact header in the grid's header cell. */
export class ColumnHeaderComp implements IHeaderComp {
  private el = document.createElement('div');
  init(params: IHeaderParams & { column_: Column; ctx: HeaderContext }): void {
    this.el.className = 'col-header-host';
    render(<Header column={params.column_} ctx={params.ctx} />, this.el);
  }
  getGui(): HTMLElement {
    return this.el;
  }
  refresh(params: IHeaderParams & { column_: Column; ctx: HeaderContext }): boolean {
    render(<Header column={params.column_} ctx={params.ctx} />, this.el);
    return true;
  }
  destroy(): void {
    render(null, this.el);
  }
}
