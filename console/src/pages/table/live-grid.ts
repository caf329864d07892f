import {
  CellStyleModule,
  type CellValueChangedEvent,
  ColumnApiModule,
  ColumnAutoSizeModule,
  colorSchemeVariable,
  createGrid,
  type GridApi,
  type IDatasource,
  InfiniteRowModelModule,
  ModuleRegistry,
  RenderApiModule,
  RowApiModule,
  RowSelectionModule,
  ScrollApiModule,
  TextEditorModule,
  themeQuartz,
  TooltipModule,
} from 'ag-grid-community';
import { type ApiError, api, boot } from '../../api.ts';
import type { OpenedCell } from './cell-detail.tsx';
import type { HeaderContext } from './column-header.tsx';
import { BLOCK, columnDefs, type Grid, ShownRows, Widths } from './grid-columns.ts';
import type { ApiCell, Column, Project, Row } from './table-types.ts';
import { type ViewState, viewQuery } from './view-state.ts';

// The grid's features come in modules: only these are bundled (refreshCells: RenderApiModule;
// ensureIndexVisible: ScrollApiModule; the tool columns' cellClass: CellStyleModule, without which
// AG Grid logged error #200 on every table and tool cells lost their style; widths that fit the
// content: ColumnAutoSizeModule (and getColumn to read them: ColumnApiModule); editing input cells
// in place: TextEditorModule; the rows' checkboxes: RowSelectionModule; how many rows there are now:
// RowApiModule; an edit the service refused explains itself in the cell's tooltip: TooltipModule).
ModuleRegistry.registerModules([
  InfiniteRowModelModule,
  RenderApiModule,
  ScrollApiModule,
  CellStyleModule,
  ColumnAutoSizeModule,
  ColumnApiModule,
  TextEditorModule,
  RowSelectionModule,
  RowApiModule,
  TooltipModule,
]);

const GRID_THEME = themeQuartz.withPart(colorSchemeVariable);

/** What the page gives the live grid, and hears back from it. */
export interface LiveGridOptions {
  id: string;
  container(): HTMLElement | null;
  /** What the table shows (search, filter, sort, hidden columns): the rows asked for follow it. */
  view: { current: ViewState };
  openedRef: { current: OpenedCell | undefined };
  header: HeaderContext;
  onGrid(grid: GridApi<Row>): void;
  onProject(project: Project): void;
  onTotal(total: number): void;
  onError(message: string): void;
  onQueryError(message: string | undefined): void;
  onOpen(cell: OpenedCell): void;
  onOpenRow(row: Row, rowIndex: number): void;
  /** A live change reached the open cell: its detail reads it again. */
  onOpenedChanged(): void;
  onSelection(rows: Row[]): void;
  /** Cells changed (a tool's results, an edit, rows added or removed): the columns' progress is read again. */
  onCellsChanged(): void;
  /** An edit the service refused: the cell has its old value back. */
  onEditError(message: string | undefined): void;
}

type RowsPage = { rows: Row[]; total_rows: number };

/**
 * Pages of GET …/rows, with the page's view (search, filter, sort). A page asked for ahead (a jump:
 * its request leaves before the grid has drawn the empty rows it scrolls to) is taken from here, once.
 */
class RowPages {
  private readonly ahead = new Map<string, Promise<RowsPage>>();
  constructor(
    private readonly path: string,
    private readonly g: Grid,
    private readonly o: LiveGridOptions,
  ) {}

  private url(startRow: number): string {
    const query = viewQuery(this.o.view.current, this.g.columns);
    return `${this.path}/rows?page=${Math.floor(startRow / BLOCK) + 1}&page_size=${BLOCK}${query ? `&${query}` : ''}`;
  }

  read(startRow: number): Promise<RowsPage> {
    const url = this.url(startRow);
    const early = this.ahead.get(url);
    this.ahead.delete(url);
    return early ?? api<RowsPage>('GET', url);
  }

  /**
   * Asks now for the blocks rows [from, to] fall in. A failed early request is asked again by the
   * grid; one the grid did not take within seconds is dropped (its rows may have changed since).
   */
  askAhead(from: number, to: number): void {
    this.ahead.clear();
    for (let block = Math.floor(Math.max(0, from) / BLOCK); block <= Math.floor(to / BLOCK); block++) {
      const url = this.url(block * BLOCK);
      const p = api<RowsPage>('GET', url);
      const drop = () => {
        if (this.ahead.get(url) === p) this.ahead.delete(url);
      };
      p.catch(drop);
      setTimeout(drop, 3_000);
      this.ahead.set(url, p);
    }
  }
}

/** The grid's datasource: pages as the grid scrolls. */
function rowsSource(pages: RowPages, g: Grid, o: LiveGridOptions, firstRows: () => void): IDatasource {
  return {
    getRows: async ({ startRow, successCallback, failCallback }) => {
      try {
        const page = await pages.read(startRow);
        o.onTotal(page.total_rows);
        o.onQueryError(undefined);
        successCallback(page.rows, page.total_rows);
        if (startRow === 0) firstRows();
      } catch (e) {
        if (viewQuery(o.view.current, g.columns)) o.onQueryError((e as Error).message);
        else o.onError((e as Error).message);
        failCallback();
      }
    },
  };
}

interface CellsEvent {
  col_id: string;
  cells: { row_id: string; status: ApiCell['status']; value?: unknown; error?: string | null }[];
}

/** A `cells` event: the rows shown change in place, their cells are drawn again, an open detail reads again. */
function applyCells(data: CellsEvent, g: Grid, grid: GridApi<Row> | undefined, o: LiveGridOptions, unknownColumn: () => void): void {
  if (!grid) return; // before the grid: the rows it fetches are newer anyway
  const name = g.columns.find((c) => c.col_id === data.col_id)?.name;
  // A column this page has not read yet (made a moment ago, here or elsewhere): columns and rows are read again.
  if (!name) {
    unknownColumn();
    return;
  }
  for (const c of data.cells) {
    const row = g.shown.get(c.row_id);
    if (!row) continue;
    const before = row.company[name] ?? { value: null };
    row.company[name] = 'value' in c ? { value: c.value, status: c.status, error: c.error ?? null } : { ...before, status: c.status };
  }
  grid.refreshCells({ columns: [data.col_id], force: true });
  const opened = o.openedRef.current;
  if (opened?.colId === data.col_id && data.cells.some((c) => c.row_id === opened.rowId)) o.onOpenedChanged();
}

/** What the page can ask of a running live grid. */
export interface LiveGrid {
  stop(): void;
  /** The view changed (search, filter, sort or hidden columns): the rows are asked for again. */
  viewChanged(): void;
  /** The project's columns are read again (after a column was added, edited or deleted here). */
  reloadColumns(): Promise<void>;
  /** Fits a column's width to what it shows (the header menu's "Fit width"). */
  fit(colId: string): void;
  /** Brings row number `n` into view as soon as the grid has that many rows (a row just added at the end). */
  showRow(n: number): void;
  /** Scrolls row number `n` to the top, its rows asked for at once. */
  goTo(n: number): void;
}

/**
 * The project's rows in a virtualized grid (AG Grid's infinite row model), kept live over the
 * project's event stream.
 */
class LiveTable implements LiveGrid {
  private grid: GridApi<Row> | undefined;
  private readonly g: Grid;
  private readonly path: string;
  private readonly events: EventSource;
  private stopped = false;
  private fittedOnce = false;
  private rereading: Promise<void> | undefined;
  private wantedRow: number | undefined;
  private readonly pages: RowPages;

  constructor(private readonly o: LiveGridOptions) {
    this.g = { columns: [], shown: new ShownRows(), widths: new Widths(o.id), errors: new Map() };
    this.path = `/projects/${encodeURIComponent(o.id)}`;
    this.pages = new RowPages(this.path, this.g, o);
    // Watch first, then read: a change made in between is then both in what is read and in an event, never in neither.
    this.events = new EventSource(`${boot.basePath}${this.path}/events`);
    this.watch();
    // The project is read once the stream is open (or could not open: then the page still shows it).
    new Promise<void>((resolve) => {
      this.events.addEventListener('open', () => resolve(), { once: true });
      this.events.addEventListener('error', () => resolve(), { once: true });
    })
      .then(() => this.readProject())
      .then(() => this.create())
      .catch((e: ApiError) => o.onError(e.status === 404 ? 'This project does not exist in this workspace.' : e.message));
  }

  private readonly open = (c: Column, row: Row | undefined, rowIndex: number | null) => {
    if (row && rowIndex !== null) this.o.onOpen({ rowId: String(row.id), rowIndex, colId: c.col_id, column: c.name });
  };

  private readProject(): Promise<Project> {
    return api<Project>('GET', this.path).then((p) => {
      this.g.columns = p.columns;
      this.o.onProject(p);
      return p;
    });
  }

  private redrawColumns(): void {
    this.grid?.setGridOption('columnDefs', columnDefs(this.g, this.o, this.open));
  }

  /** Widths fitted to the rows shown, for columns a person has not sized (at most 360 px: a long text reads whole in its detail). */
  private fitWidths(colIds?: string[]): void {
    const { grid, g } = this;
    if (!grid) return;
    const ids = colIds ?? g.columns.filter((c) => g.widths.set[c.col_id] === undefined).map((c) => c.col_id);
    if (!ids.length) return;
    grid.autoSizeColumns({ colIds: ids, defaultMinWidth: 90, defaultMaxWidth: 360 });
    for (const id of ids) {
      const w = grid.getColumn(id)?.getActualWidth();
      if (w) g.widths.fitted[id] = w;
    }
  }

  private watch(): void {
    const { events, o } = this;
    events.addEventListener('cells', (e) => {
      applyCells(JSON.parse((e as MessageEvent).data) as CellsEvent, this.g, this.grid, o, () => this.unknownColumn());
      o.onCellsChanged();
    });
    const refresh = () => {
      this.grid?.refreshInfiniteCache();
      o.onCellsChanged();
    };
    events.addEventListener('rows', refresh);
    events.addEventListener('reset', refresh);
    events.addEventListener('builder', () => void this.readProject().then(refresh));
    events.addEventListener('columns', () => void this.reloadColumns().then(() => o.onCellsChanged()));
  }

  /** A column this page has not read yet (made a moment ago, here or elsewhere): columns and rows are read again, once. */
  private unknownColumn(): void {
    this.rereading ??= this.reloadColumns()
      .then(() => this.grid?.refreshInfiniteCache())
      .catch(() => undefined)
      .finally(() => {
        this.rereading = undefined;
      });
  }

  /** An input cell typed over: saved through the API; refused, the old value comes back, marked, with the reason. */
  private readonly edited = (e: CellValueChangedEvent<Row>) => {
    const { g, o } = this;
    const column = g.columns.find((c) => c.col_id === e.column.getColId());
    const row = e.data;
    if (!column || !row || e.source !== 'edit') return;
    const key = `${row.id}:${column.col_id}`;
    const value = row.company[column.name]?.value;
    api<Row>('PATCH', `${this.path}/rows/${encodeURIComponent(row.id)}`, { cells: { [column.name]: value } })
      .then((saved) => {
        g.errors.delete(key);
        row.company = saved.company;
        o.onEditError(undefined);
      })
      .catch((err: ApiError) => {
        row.company[column.name] = { value: e.oldValue === '' ? null : e.oldValue };
        g.errors.set(key, err.message);
        o.onEditError(`Row ${((e.rowIndex ?? 0) + 1).toLocaleString()}, ${column.name}: not saved. ${err.message}`);
      })
      .finally(() => this.grid?.refreshCells({ rowNodes: [e.node], force: true }));
  };

  private readonly showWanted = () => {
    const { grid, wantedRow } = this;
    if (!grid || wantedRow === undefined || grid.getDisplayedRowCount() < wantedRow) return;
    grid.ensureIndexVisible(wantedRow - 1, 'bottom');
    this.wantedRow = undefined;
  };

  private create(): void {
    const container = this.o.container();
    if (!container || this.stopped) return;
    const { g, o } = this;
    const grid = createGrid<Row>(container, {
      // Light or dark as the page is (data-ag-theme-mode, set by main.tsx from the system's scheme).
      theme: GRID_THEME,
      columnDefs: columnDefs(g, o, this.open),
      rowModelType: 'infinite',
      // Two lines: a tool column's header shows its tool and progress under its name.
      headerHeight: 52,
      cacheBlockSize: BLOCK,
      maxBlocksInCache: 40,
      getRowId: (p) => String(p.data.id),
      datasource: rowsSource(this.pages, g, o, () => {
        if (this.fittedOnce) return;
        this.fittedOnce = true;
        requestAnimationFrame(() => this.fitWidths());
      }),
      rowSelection: { mode: 'multiRow', checkboxes: true, headerCheckbox: false, enableClickSelection: false },
      selectionColumnDef: { pinned: 'left', width: 44, resizable: false, suppressMovable: true },
      stopEditingWhenCellsLoseFocus: true,
      tooltipShowDelay: 300,
      onModelUpdated: this.showWanted,
      onSelectionChanged: () => o.onSelection(grid.getSelectedRows()),
      onCellValueChanged: this.edited,
      onColumnResized: (e) => {
        if (e.finished && e.source === 'uiColumnResized')
          for (const c of e.columns ?? []) if (!c.getColId().startsWith('__')) g.widths.remember(c.getColId(), c.getActualWidth());
      },
    });
    this.grid = grid;
    o.onGrid(grid);
    o.onCellsChanged();
  }

  stop(): void {
    this.stopped = true;
    this.events.close();
    this.grid?.destroy();
  }

  viewChanged(): void {
    this.redrawColumns();
    this.grid?.deselectAll();
    this.grid?.purgeInfiniteCache();
  }

  reloadColumns(): Promise<void> {
    return this.readProject().then(() => this.redrawColumns());
  }

  fit(colId: string): void {
    this.fitWidths([colId]);
  }

  goTo(n: number): void {
    const { grid } = this;
    if (!grid) return;
    const index = Math.min(n, grid.getDisplayedRowCount()) - 1;
    // The rows drawn around it: the grid's buffer above (10 rows), a screen and its buffer below.
    this.pages.askAhead(index - 10, index + 60);
    grid.ensureIndexVisible(index, 'top');
  }

  showRow(n: number): void {
    this.wantedRow = n;
    this.grid?.refreshInfiniteCache();
    this.showWanted();
  }
}

export const startLiveGrid = (o: LiveGridOptions): LiveGrid => new LiveTable(o);
