import type { GridApi } from 'ag-grid-community';
import { ErrorNote } from '../error-note.tsx';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CellDetail, type OpenedCell } from './cell-detail.tsx';
import { type Project, type Row, startLiveGrid } from './live-grid.ts';
import { QueryBuilder, rowsQuery } from './query-builder.tsx';
import { AddToolColumn, RunColumn } from './tool-column.tsx';

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
    return startLiveGrid({
      id,
      container: () => gridEl.current,
      query,
      openedRef,
      onGrid: (grid) => {
        gridApi.current = grid;
      },
      onProject: setProject,
      onTotal: setTotal,
      onError: setError,
      onQueryError: setQueryError,
      onOpen: setOpened,
      onOpenedChanged: () => setOpenedVersion((v) => v + 1),
    });
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
                <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>{' '}
                {/* "page 3: 10 rows written" names its step already: not "page page 3". */}
                {e.message.startsWith(e.step) ? null : <strong>{e.step} </strong>}
                {e.message}
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
