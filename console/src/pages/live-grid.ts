import {
  CellStyleModule,
  colorSchemeVariable,
  type ColDef,
  createGrid,
  type GridApi,
  type ICellRendererParams,
  type IDatasource,
  InfiniteRowModelModule,
  ModuleRegistry,
  RenderApiModule,
  ScrollApiModule,
  themeQuartz,
} from 'ag-grid-community';
import { type ApiError, api, boot } from '../api.ts';
import type { OpenedCell } from './cell-detail.tsx';

// The grid's features come in modules: only these are bundled (refreshCells: RenderApiModule;
// ensureIndexVisible: ScrollApiModule; the tool columns' cellClass: CellStyleModule, without which
// AG Grid logged error #200 on every table and tool cells lost their style).
ModuleRegistry.registerModules([InfiniteRowModelModule, RenderApiModule, ScrollApiModule, CellStyleModule]);

export interface Column {
  col_id: string;
  name: string;
  type: 'input' | 'tool';
  tool_id?: string | null;
}
export interface Project {
  id: string;
  name: string;
  columns: Column[];
  row_count: number;
  builder_status: { type: string; error_message: string | null; progress?: { rows_created: number; target: number }; warning?: string };
  lead_gen_execution_log?: { at: string; step: string; message: string }[];
  settings?: { unique_columns: string[] };
}
export interface ApiCell {
  value: unknown;
  status?: string;
  error?: string | null;
}
export interface Row {
  id: string;
  company: Record<string, ApiCell>;
}

const GRID_THEME = themeQuartz.withPart(colorSchemeVariable);

/** Rows fetched per request while scrolling (the API's largest page). */
const BLOCK = 100;

const text = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** A tool cell: a spinner while queued or running, the value once completed, a badge with the reason otherwise. */
function toolCell(p: ICellRendererParams<Row>): HTMLElement | string {
  const cell = p.value as ApiCell | undefined;
  if (!cell) return '';
  const span = document.createElement('span');
  const status = cell.status ?? 'completed';
  if (status === 'queued' || status === 'running') {
    span.className = 'spinner';
    span.setAttribute('role', 'img');
    span.setAttribute('aria-label', status);
    span.title = status;
    return span;
  }
  if (status === 'completed') return text(cell.value);
  span.className = `badge badge-${status}`;
  span.textContent = status.replace(/_/g, ' ');
  if (!cell.error) return span;
  // The reason beside the badge (cut by the cell's width; whole in the tooltip).
  const wrap = document.createElement('span');
  wrap.title = cell.error;
  wrap.append(span, ` ${cell.error}`);
  return wrap;
}

/** What the page gives the live grid, and hears back from it. */
export interface LiveGridOptions {
  id: string;
  container(): HTMLElement | null;
  /** The filter and sort of the rows asked for (query string parts of GET …/rows). */
  query: { current: string };
  openedRef: { current: OpenedCell | undefined };
  onGrid(grid: GridApi<Row>): void;
  onProject(project: Project): void;
  onTotal(total: number): void;
  onError(message: string): void;
  onQueryError(message: string | undefined): void;
  onOpen(cell: OpenedCell): void;
  /** A live change reached the open cell: its detail reads it again. */
  onOpenedChanged(): void;
}

/**
 * The rows the grid shows, by id, as the grid holds them (noted when a cell reads its row: a block
 * the grid fetched twice keeps only one answer, and it is that one): a live update changes them in
 * place, then the cells are drawn again.
 */
class ShownRows {
  private readonly rows = new Map<string, Row>();
  note(row: Row | undefined): void {
    if (!row) return;
    this.rows.set(String(row.id), row);
    if (this.rows.size > 8 * BLOCK) this.rows.delete(this.rows.keys().next().value as string);
  }
  get(id: string): Row | undefined {
    return this.rows.get(id);
  }
}

/** The grid's columns: tool cells open their detail on click or Enter. */
function columnDefs(
  cols: Column[],
  shown: ShownRows,
  open: (c: Column, row: Row | undefined, rowIndex: number | null) => void,
): ColDef<Row>[] {
  return cols.map((c) => ({
    colId: c.col_id,
    headerName: c.name,
    sortable: false,
    minWidth: 140,
    flex: 1,
    ...(c.type === 'tool'
      ? {
          valueGetter: (p) => {
            shown.note(p.data);
            return p.data?.company[c.name];
          },
          cellRenderer: toolCell,
          cellClass: 'tool-cell',
          onCellClicked: (p) => open(c, p.data, p.rowIndex),
          // Enter on the focused cell opens its detail. Here rather than in onCellKeyDown, which the grid
          // calls later: the key is taken now, so it does not also press the dialog's button.
          suppressKeyboardEvent: (p) => {
            if (p.event.type !== 'keydown' || p.event.key !== 'Enter' || p.editing || !p.data) return false;
            p.event.preventDefault();
            open(c, p.data, p.node.rowIndex);
            return true;
          },
        }
      : {
          valueGetter: (p) => {
            shown.note(p.data);
            return text(p.data?.company[c.name]?.value);
          },
        }),
  }));
}

/** Pages of GET …/rows as the grid scrolls, with the page's filter and sort. */
function rowsSource(path: string, o: LiveGridOptions): IDatasource {
  return {
    getRows: async ({ startRow, successCallback, failCallback }) => {
      try {
        const extra = o.query.current ? `&${o.query.current}` : '';
        const page = await api<{ rows: Row[]; total_rows: number }>(
          'GET',
          `${path}/rows?page=${Math.floor(startRow / BLOCK) + 1}&page_size=${BLOCK}${extra}`,
        );
        o.onTotal(page.total_rows);
        o.onQueryError(undefined);
        successCallback(page.rows, page.total_rows);
      } catch (e) {
        if (o.query.current) o.onQueryError((e as Error).message);
        else o.onError((e as Error).message);
        failCallback();
      }
    },
  };
}

interface CellsEvent {
  col_id: string;
  cells: { row_id: string; status: string; value?: unknown; error?: string | null }[];
}

/** A `cells` event: the rows shown change in place, their cells are drawn again, an open detail reads again. */
function applyCells(data: CellsEvent, columns: Column[], shown: ShownRows, grid: GridApi<Row> | undefined, o: LiveGridOptions): void {
  const name = columns.find((c) => c.col_id === data.col_id)?.name;
  if (!name || !grid) return; // before the grid: the rows it fetches are newer anyway
  for (const c of data.cells) {
    const row = shown.get(c.row_id);
    if (!row) continue;
    const before = row.company[name] ?? { value: null };
    row.company[name] = 'value' in c ? { value: c.value, status: c.status, error: c.error ?? null } : { ...before, status: c.status };
  }
  grid.refreshCells({ columns: [data.col_id], force: true });
  const opened = o.openedRef.current;
  if (opened?.colId === data.col_id && data.cells.some((c) => c.row_id === opened.rowId)) o.onOpenedChanged();
}

/**
 * The project's rows in a virtualized grid (AG Grid's infinite row model), kept live over the
 * project's event stream. Answers the function that stops it.
 */
export function startLiveGrid(o: LiveGridOptions): () => void {
  let grid: GridApi<Row> | undefined;
  let columns: Column[] = [];
  const shown = new ShownRows();
  const path = `/projects/${encodeURIComponent(o.id)}`;
  const open = (c: Column, row: Row | undefined, rowIndex: number | null) => {
    if (row && rowIndex !== null) o.onOpen({ rowId: String(row.id), rowIndex, colId: c.col_id, column: c.name });
  };
  const readProject = () =>
    api<Project>('GET', path).then((p) => {
      columns = p.columns;
      o.onProject(p);
      return p;
    });
  // Watch first, then read: a change made in between is then both in what is read and in an event, never in neither.
  const events = new EventSource(`${boot.basePath}${path}/events`);
  events.addEventListener('cells', (e) => applyCells(JSON.parse((e as MessageEvent).data) as CellsEvent, columns, shown, grid, o));
  const refresh = () => grid?.refreshInfiniteCache();
  events.addEventListener('rows', refresh);
  events.addEventListener('reset', refresh);
  events.addEventListener('builder', () => void readProject().then(refresh));
  events.addEventListener(
    'columns',
    () => void readProject().then(() => grid?.setGridOption('columnDefs', columnDefs(columns, shown, open))),
  );
  // The project is read once the stream is open (or could not open: then the page still shows it).
  const streaming = new Promise<void>((resolve) => {
    events.addEventListener('open', () => resolve(), { once: true });
    events.addEventListener('error', () => resolve(), { once: true });
  });
  let stopped = false;
  streaming
    .then(readProject)
    .then(() => {
      const container = o.container();
      if (!container || stopped) return;
      grid = createGrid<Row>(container, {
        // Light or dark as the page is (data-ag-theme-mode, set by main.tsx from the system's scheme).
        theme: GRID_THEME,
        columnDefs: columnDefs(columns, shown, open),
        rowModelType: 'infinite',
        cacheBlockSize: BLOCK,
        maxBlocksInCache: 40,
        getRowId: (p) => String(p.data.id),
        datasource: rowsSource(path, o),
      });
      o.onGrid(grid);
    })
    .catch((e: ApiError) => o.onError(e.status === 404 ? 'This project does not exist in this workspace.' : e.message));
  return () => {
    stopped = true;
    events.close();
    grid?.destroy();
  };
}
