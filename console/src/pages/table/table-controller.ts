import type { GridApi } from 'ag-grid-community';
import { stringify } from 'csv-stringify/browser/esm/sync';
import { api } from '../../api.ts';
import type { Answer } from '../../api-shapes.ts';
import { navigate } from '../../router.ts';
import { signal } from '../../signal.ts';
import type { OpenedCell } from './cell-detail.tsx';
import { primaryValue, text } from './cell-text.ts';
import type { ColumnProgress, HeaderContext } from './column-header.tsx';
import type { ColumnActions } from './column-menu.tsx';
import { type LiveGrid, startLiveGrid } from './live-grid.ts';
import { download } from './table-forms.tsx';
import type { Column, Project, Row } from './table-types.ts';
import { type RunMode, toolCatalog } from './tool-column.tsx';
import { narrowed, readView, type ViewState, viewBody, writeView } from './view-state.ts';

/** A panel beside the table: what it holds. */
export type Panel =
  | { kind: 'filter' }
  | { kind: 'columns' }
  | { kind: 'add-column' }
  | { kind: 'add-row' }
  | { kind: 'log' }
  | { kind: 'rename-project' }
  | { kind: 'edit-column'; column: Column }
  | { kind: 'rename-column'; column: Column }
  | { kind: 'run'; column: Column; mode: RunMode; rowIds?: string[] }
  | { kind: 'run-selected' }
  | { kind: 'row'; rowId: string; rowIndex: number };

/** Everything the table page draws. */
export interface TableState {
  project?: Project;
  /** Rows of the current view (search and filter applied); undefined until its first page arrives. */
  total?: number;
  error?: string;
  editError?: string;
  queryError?: string;
  notice?: string;
  view: ViewState;
  panel?: Panel;
  menu?: { column: Column; anchor: HTMLElement };
  selected: Row[];
  toolNames: Map<string, string>;
  /** The tool cell whose detail is open (click, or Enter on the focused cell), and its reads: one more each time it changes live. */
  opened?: OpenedCell;
  openedVersion: number;
  /** Moves when cells change live: an open row detail reads its row again. */
  rowVersion: number;
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * What a project's table does: its view (kept in the URL), the live grid, the columns' progress, and
 * the actions of its toolbar, menus and panels. One per page; the page draws `state`.
 */
export class TableController {
  state: TableState = { view: readView(location.search), selected: [], toolNames: new Map(), openedVersion: 0, rowVersion: 0 };
  readonly path: string;
  grid: GridApi<Row> | undefined;
  private live: LiveGrid | undefined;
  private readonly viewRef = { current: this.state.view };
  private readonly openedRef: { current: OpenedCell | undefined } = { current: undefined };
  /** What the column headers follow (the grid draws them, outside the page's components). */
  readonly header: HeaderContext & { names: Map<string, string> };
  private progressTimer: ReturnType<typeof setTimeout> | undefined;
  private progressDue = false;

  constructor(
    readonly id: string,
    private readonly draw: (s: TableState) => void,
  ) {
    this.path = `/projects/${encodeURIComponent(id)}`;
    const header: HeaderContext & { names: Map<string, string> } = {
      sort$: signal(this.state.view.sort),
      progress$: signal(new Map<string, ColumnProgress>()),
      names: new Map(),
      toolName: (toolId) => (toolId ? header.names.get(toolId) : undefined),
      onSortClick: (c) => this.cycleSort(c),
      onMenu: (column, anchor) => this.patch({ menu: { column, anchor } }),
    };
    this.header = header;
  }

  patch(p: Partial<TableState>): void {
    // Nothing new (a page of rows says the same total again): nothing drawn again.
    if (Object.entries(p).every(([k, v]) => this.state[k as keyof TableState] === v)) return;
    this.state = { ...this.state, ...p };
    this.openedRef.current = this.state.opened;
    this.draw(this.state);
  }

  get columns(): Column[] {
    return this.state.project?.columns ?? [];
  }

  /** Starts the grid in `container`; answers the function that stops it. */
  start(container: () => HTMLElement | null): () => void {
    toolCatalog()
      .then((tools) => {
        this.header.names = new Map(tools.map((t) => [t.tool_id, t.name]));
        this.patch({ toolNames: this.header.names });
        this.grid?.refreshHeader();
      })
      .catch(() => undefined); // without names, headers show tool ids
    this.live = startLiveGrid({
      id: this.id,
      container,
      view: this.viewRef,
      openedRef: this.openedRef,
      header: this.header,
      onGrid: (g) => {
        this.grid = g;
      },
      onProject: (project) => this.patch({ project }),
      onTotal: (total) => this.patch({ total }),
      onError: (error) => this.patch({ error }),
      onQueryError: (queryError) => this.patch({ queryError }),
      onOpen: (opened) => this.patch({ opened }),
      onOpenRow: (row, rowIndex) => this.patch({ panel: { kind: 'row', rowId: String(row.id), rowIndex } }),
      onOpenedChanged: () => this.patch({ openedVersion: this.state.openedVersion + 1 }),
      onSelection: (selected) => this.patch({ selected }),
      onCellsChanged: () => {
        this.readProgress();
        this.patch({ rowVersion: this.state.rowVersion + 1 });
      },
      onEditError: (editError) => this.patch({ editError }),
    });
    return () => {
      clearTimeout(this.progressTimer);
      this.live?.stop();
    };
  }

  /** A new view: into the URL, the headers' sort marks, and the rows asked for again. */
  setView(view: ViewState): void {
    this.viewRef.current = view;
    this.patch({ view, total: undefined }); // counted again by the first page of the new view
    writeView(view);
    this.header.sort$.set(view.sort);
    this.live?.viewChanged();
  }

  /** A click on a header: ascending, then descending, then that sort off. */
  private cycleSort(c: Column): void {
    const v = this.state.view;
    const now = v.sort.find((s) => s.col_id === c.col_id);
    const others = v.sort.filter((s) => s.col_id !== c.col_id);
    const sort = !now
      ? [{ col_id: c.col_id, direction: 'asc' as const, sort_as_number: false }, ...others]
      : now.direction === 'asc'
        ? [{ ...now, direction: 'desc' as const }, ...others]
        : others;
    this.setView({ ...v, sort });
  }

  /** The columns' progress: read when cells change, at most every 1.5 s (one grouped count on the service). */
  readProgress(): void {
    if (this.progressTimer) {
      this.progressDue = true;
      return;
    }
    api<Answer<'get_column_progress'>>('GET', `${this.path}/columns/progress`)
      .then((r) => this.header.progress$.set(new Map(r.columns.map((c) => [c.col_id, c]))))
      .catch(() => undefined); // the bars are a help: a failed read leaves the last ones
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      if (this.progressDue) {
        this.progressDue = false;
        this.readProgress();
      }
    }, 1500);
  }

  reloadColumns = () => this.live?.reloadColumns() ?? Promise.resolve();
  showRow = (n: number) => this.live?.showRow(n);
  goTo = (n: number) => this.live?.goTo(n);

  private async attempt(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.patch({ error: (e as Error).message });
    }
  }

  /** Export CSV: the rows of the view (search, filter, sort), its shown columns, by the service (any size). */
  exportView = () =>
    this.attempt(async () => {
      const { view, total } = this.state;
      const shown = this.columns.filter((c) => !view.hidden.includes(c.col_id)).map((c) => c.col_id);
      const r = await api<Answer<'export_project'>>('POST', `${this.path}/exports`, { ...viewBody(view, this.columns), columns: shown });
      const a = document.createElement('a');
      a.href = r.url;
      a.download = '';
      a.click();
      this.patch({
        notice: narrowed(view)
          ? `Exporting the ${(total ?? 0).toLocaleString()} rows this search and filter show.`
          : 'Exporting every row of the table.',
      });
    });

  /** The selected rows as a CSV file, made here from what the grid holds (values as shown). */
  exportSelected = () => {
    const { selected, view, project } = this.state;
    const shown = this.columns.filter((c) => !view.hidden.includes(c.col_id));
    const lines = selected.map((r) =>
      shown.map((c) => {
        const cell = r.company[c.name];
        return text(c.type === 'tool' ? primaryValue(cell?.value, c.primary_field) : cell?.value);
      }),
    );
    const csv = stringify([shown.map((c) => c.name), ...lines], { record_delimiter: 'windows' });
    download(`${project?.name ?? 'rows'} (${selected.length} rows).csv`, csv);
  };

  deleteSelected = () =>
    this.attempt(async () => {
      const { selected } = this.state;
      if (!confirm(`Delete ${plural(selected.length, 'row', 'rows')}? Their values and enriched cells go with them.`)) return;
      const r = await api<Answer<'delete_rows'>>('DELETE', `${this.path}/rows`, { row_ids: selected.map((x) => String(x.id)) });
      this.patch({ notice: `${plural(r.deleted, 'row', 'rows')} deleted.` });
      this.grid?.deselectAll();
      this.grid?.refreshInfiniteCache();
    });

  deleteProject = () =>
    this.attempt(async () => {
      const { project } = this.state;
      if (!project) return;
      const what = `Its ${plural(project.row_count, 'row', 'rows')}, its columns and their values are deleted; this cannot be undone.`;
      if (!confirm(`Delete the project “${project.name}”? ${what}`)) return;
      await api('DELETE', this.path);
      navigate('/');
    });

  /** What a column's menu does. */
  columnActions(c: Column): ColumnActions {
    const view = () => this.state.view;
    const others = () => view().sort.filter((s) => s.col_id !== c.col_id);
    return {
      sort: (direction, asNumber) =>
        this.setView({ ...view(), sort: [{ col_id: c.col_id, direction, sort_as_number: asNumber }, ...others()] }),
      clearSort: () => this.setView({ ...view(), sort: others() }),
      filter: () => {
        const v = view();
        this.setView({ ...v, filter: { ...v.filter, rules: [...v.filter.rules, { col_id: c.col_id, operator: 'contains', value: '' }] } });
        this.patch({ panel: { kind: 'filter' } });
      },
      hide: () => this.setView({ ...view(), hidden: [...new Set([...view().hidden, c.col_id])] }),
      fit: () => this.live?.fit(c.col_id),
      rename: () => this.patch({ panel: { kind: 'rename-column', column: c } }),
      remove: () => this.deleteColumn(c),
      run: (mode) => this.patch({ panel: { kind: 'run', column: c, mode } }),
      edit: () => this.patch({ panel: { kind: 'edit-column', column: c } }),
    };
  }

  private deleteColumn = (c: Column) =>
    this.attempt(async () => {
      const rows = plural(this.state.project?.row_count ?? 0, 'row', 'rows');
      const what =
        c.type === 'tool' ? `Its results in ${rows} are deleted, and its queued cells stop.` : `Its values in ${rows} are deleted.`;
      if (!confirm(`Delete the column “${c.name}”? ${what} This cannot be undone.`)) return;
      await api('DELETE', `${this.path}/columns/${encodeURIComponent(c.col_id)}`);
      await this.reloadColumns();
      this.patch({ notice: `Column ${c.name} deleted.` });
    });
}
