import {
  type ColDef,
  createGrid,
  type GridApi,
  type ICellRendererParams,
  type IDatasource,
  InfiniteRowModelModule,
  ModuleRegistry,
  RenderApiModule,
  ScrollApiModule,
} from 'ag-grid-community';
import { ErrorNote } from '../error-note.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, api, boot } from '../api.ts';
import { CellDetail, type OpenedCell } from './cell-detail.tsx';
import { QueryBuilder, rowsQuery } from './query-builder.tsx';
import { AddToolColumn, RunColumn } from './tool-column.tsx';

// The grid's features come in modules: only these are bundled (refreshCells: RenderApiModule; ensureIndexVisible: ScrollApiModule).
ModuleRegistry.registerModules([InfiniteRowModelModule, RenderApiModule, ScrollApiModule]);

interface Column {
  col_id: string;
  name: string;
  type: 'input' | 'tool';
  tool_id?: string | null;
}
interface Project {
  id: string;
  name: string;
  columns: Column[];
  row_count: number;
  builder_status: { type: string; error_message: string | null; progress?: { rows_created: number; target: number }; warning?: string };
  lead_gen_execution_log?: { at: string; step: string; message: string }[];
  settings?: { unique_columns: string[] };
}
interface ApiCell {
  value: unknown;
  status?: string;
  error?: string | null;
}
interface Row {
  id: string;
  company: Record<string, ApiCell>;
}

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

/** `/projects/{id}`: the project's rows in a virtualized grid (AG Grid's infinite row model), kept live over SSE. */
export function ProjectTablePage({ id }: { id: string }) {
  const [project, setProject] = useState<Project | undefined>();
  const [total, setTotal] = useState<number | undefined>();
  const [error, setError] = useState<string | undefined>();
  const gridEl = useRef<HTMLElement>(null);
  const gridApi = useRef<GridApi<Row> | undefined>(undefined);
  /** The filter and sort of the rows asked for (query string parts of GET …/rows). */
  const query = useRef('');
  const [queryError, setQueryError] = useState<string | undefined>();
  /** The tool cell whose detail is open (click, or Enter on the focused cell), and its reads: one more each time it changes live. */
  const [opened, setOpened] = useState<OpenedCell | undefined>();
  const openedRef = useRef<OpenedCell | undefined>(undefined);
  openedRef.current = opened;
  const [openedVersion, setOpenedVersion] = useState(0);

  useEffect(() => {
    setOpened(undefined);
    let grid: GridApi<Row> | undefined;
    let events: EventSource | undefined;
    let columns: Column[] = [];
    /**
     * The rows the grid shows, by id, as the grid holds them (noted when a cell reads its row: a
     * block the grid fetched twice keeps only one answer, and it is that one): a live update changes
     * them in place, then the cells are drawn again.
     */
    const shown = new Map<string, Row>();
    const note = (row: Row | undefined) => {
      if (!row) return;
      shown.set(String(row.id), row);
      if (shown.size > 8 * BLOCK) shown.delete(shown.keys().next().value as string);
    };
    const path = `/projects/${encodeURIComponent(id)}`;
    const open = (c: Column, row: Row | undefined, rowIndex: number | null) => {
      if (row && rowIndex !== null) setOpened({ rowId: String(row.id), rowIndex, colId: c.col_id, column: c.name });
    };
    const columnDefs = (cols: Column[]): ColDef<Row>[] =>
      cols.map((c) => ({
        colId: c.col_id,
        headerName: c.name,
        sortable: false,
        minWidth: 140,
        flex: 1,
        ...(c.type === 'tool'
          ? {
              valueGetter: (p) => {
                note(p.data);
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
                note(p.data);
                return text(p.data?.company[c.name]?.value);
              },
            }),
      }));
    const datasource: IDatasource = {
      getRows: async ({ startRow, successCallback, failCallback }) => {
        try {
          const extra = query.current ? `&${query.current}` : '';
          const page = await api<{ rows: Row[]; total_rows: number }>(
            'GET',
            `${path}/rows?page=${Math.floor(startRow / BLOCK) + 1}&page_size=${BLOCK}${extra}`,
          );
          setTotal(page.total_rows);
          setQueryError(undefined);
          successCallback(page.rows, page.total_rows);
        } catch (e) {
          if (query.current) setQueryError((e as Error).message);
          else setError((e as Error).message);
          failCallback();
        }
      },
    };
    const readProject = () =>
      api<Project>('GET', path).then((p) => {
        columns = p.columns;
        setProject(p);
        return p;
      });
    // Watch first, then read: a change made in between is then both in what is read and in an event, never in neither.
    events = new EventSource(`${boot.basePath}${path}/events`);
    events.addEventListener('cells', (e) => {
      const data = JSON.parse((e as MessageEvent).data) as {
        col_id: string;
        cells: { row_id: string; status: string; value?: unknown; error?: string | null }[];
      };
      const name = columns.find((c) => c.col_id === data.col_id)?.name;
      if (!name || !grid) return; // before the grid: the rows it fetches are newer anyway
      for (const c of data.cells) {
        const row = shown.get(c.row_id);
        if (!row) continue;
        const before = row.company[name] ?? { value: null };
        row.company[name] = 'value' in c ? { value: c.value, status: c.status, error: c.error ?? null } : { ...before, status: c.status };
      }
      grid.refreshCells({ columns: [data.col_id], force: true });
      const o = openedRef.current;
      if (o?.colId === data.col_id && data.cells.some((c) => c.row_id === o.rowId)) setOpenedVersion((v) => v + 1);
    });
    const refresh = () => grid?.refreshInfiniteCache();
    events.addEventListener('rows', refresh);
    events.addEventListener('reset', refresh);
    events.addEventListener('builder', () => void readProject().then(refresh));
    events.addEventListener('columns', () => void readProject().then(() => grid?.setGridOption('columnDefs', columnDefs(columns))));
    // The project is read once the stream is open (or could not open: then the page still shows it).
    const opened = new Promise<void>((resolve) => {
      events?.addEventListener('open', () => resolve(), { once: true });
      events?.addEventListener('error', () => resolve(), { once: true });
    });
    opened
      .then(readProject)
      .then(() => {
        if (!gridEl.current || !events) return;
        grid = createGrid<Row>(gridEl.current, {
          columnDefs: columnDefs(columns),
          rowModelType: 'infinite',
          cacheBlockSize: BLOCK,
          maxBlocksInCache: 40,
          getRowId: (p) => String(p.data.id),
          datasource,
        });
        gridApi.current = grid;
      })
      .catch((e: ApiError) => setError(e.status === 404 ? 'This project does not exist in this workspace.' : e.message));
    return () => {
      events?.close();
      grid?.destroy();
    };
  }, [id]);

  const b = project?.builder_status;
  return (
    <main class="page page-wide">
      <h1>{project?.name ?? 'Project'}</h1>
      <ErrorNote message={error} />
      {project && (
        <p>
          <a href={`/projects/${encodeURIComponent(id)}/settings`}>Project settings</a>: unique key, schedule, inbound URL
        </p>
      )}
      {project && (
        <p class="meta" aria-live="polite">
          {(total ?? project.row_count).toLocaleString()} rows
          {project.settings &&
            project.settings.unique_columns.length > 0 &&
            ` · unique key: ${project.settings.unique_columns.join(' + ')}`}
          {b && b.type !== 'completed' && (
            <>
              {' '}
              · builder {b.type}
              {b.progress && ` (${b.progress.rows_created.toLocaleString()} of ${b.progress.target.toLocaleString()})`}
              {b.error_message && `: ${b.error_message}`}
            </>
          )}
        </p>
      )}
      {b?.warning && <p class="warning">{b.warning}</p>}
      {project?.lead_gen_execution_log && project.lead_gen_execution_log.length > 0 && (
        <details class="query">
          <summary>Builder log ({project.lead_gen_execution_log.length} steps)</summary>
          <ol class="log">
            {project.lead_gen_execution_log.map((e, i) => (
              <li key={i}>
                <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time> <strong>{e.step}</strong> {e.message}
              </li>
            ))}
          </ol>
        </details>
      )}
      {project && (
        <>
          <AddToolColumn projectPath={`/projects/${encodeURIComponent(id)}`} onAdded={() => undefined} />
          <RunColumn projectPath={`/projects/${encodeURIComponent(id)}`} columns={project.columns} />
        </>
      )}
      {project && (
        <QueryBuilder
          columns={project.columns}
          error={queryError}
          onApply={(filter, sort) => {
            query.current = rowsQuery(filter, sort);
            gridApi.current?.purgeInfiniteCache();
          }}
        />
      )}
      <form
        class="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number((e.currentTarget.elements.namedItem('row') as HTMLInputElement).value);
          if (Number.isInteger(n) && n >= 1) gridApi.current?.ensureIndexVisible(Math.min(n, total ?? n) - 1, 'top');
        }}
      >
        <label for="go-to-row">Go to row</label>
        <input id="go-to-row" name="row" type="number" min={1} max={total} />
        <button type="submit">Go</button>
      </form>
      <p id="grid-hint" class="hint">
        Open a tool cell (click it, or Enter on it) to see its whole value and where it came from.
      </p>
      <section ref={gridEl} class="grid" aria-label="Rows of the project" aria-describedby="grid-hint" />
      {opened && (
        <CellDetail
          key={`${opened.rowId}:${opened.colId}`}
          projectPath={`/projects/${encodeURIComponent(id)}`}
          cell={opened}
          version={openedVersion}
          onClose={() => {
            setOpened(undefined);
            // The focus goes back to the cell that was opened: the browser gives it back to the cell's element when it is
            // still there; when the grid drew the row again meanwhile, the grid focuses the cell. The close event comes
            // after the closing itself: a key pressed in between may already have moved on in the grid, and stays there.
            if (!gridEl.current?.contains(document.activeElement)) gridApi.current?.setFocusedCell(opened.rowIndex, opened.colId);
          }}
        />
      )}
    </main>
  );
}
