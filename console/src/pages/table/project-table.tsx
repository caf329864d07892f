import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../../error-note.tsx';
import { CellDetail } from './cell-detail.tsx';
import { ColumnMenu } from './column-menu.tsx';
import { TableController, type TableState } from './table-controller.ts';
import { TablePanel } from './table-panels.tsx';
import { TableToolbar } from './table-toolbar.tsx';
import { narrowed } from './view-state.ts';

/** The project's name, its counts (rows of the view of all, unique key, builder) and what can be done to it. */
function TableHead({ t, s }: { t: TableController; s: TableState }) {
  const { project, view, total } = s;
  if (!project) return <h1>Project</h1>;
  const b = project.builder_status;
  const log = project.lead_gen_execution_log ?? [];
  const all = total ?? project.row_count;
  return (
    <div class="table-head">
      <h1>{project.name}</h1>
      <p class="meta" aria-live="polite" data-testid="row-count">
        {narrowed(view)
          ? total === undefined
            ? `Searching ${project.row_count.toLocaleString()} rows…`
            : `${total.toLocaleString()} of ${project.row_count.toLocaleString()} rows`
          : `${all.toLocaleString()} ${all === 1 ? 'row' : 'rows'}`}
        {project.settings && project.settings.unique_columns.length > 0 && ` · unique key: ${project.settings.unique_columns.join(' + ')}`}
        {b && b.type !== 'completed' && (
          <>
            {' '}
            · building: {b.type}
            {b.progress && ` (${b.progress.rows_created.toLocaleString()} of ${b.progress.target.toLocaleString()} rows)`}
            {b.error_message && `: ${b.error_message}`}
          </>
        )}
      </p>
      <span class="table-head-actions">
        {log.length > 0 && (
          <button type="button" class="link" onClick={() => t.patch({ panel: { kind: 'log' } })}>
            Builder log ({log.length} {log.length === 1 ? 'step' : 'steps'})
          </button>
        )}
        <button type="button" class="link" onClick={() => t.patch({ panel: { kind: 'rename-project' } })}>
          Rename
        </button>
        <a href={`${t.path}/settings`}>Project settings</a>
        <button type="button" class="link danger" onClick={t.deleteProject}>
          Delete project
        </button>
      </span>
    </div>
  );
}

/** What can be done with the selected rows. */
function SelectionBar({ t, s }: { t: TableController; s: TableState }) {
  const n = s.selected.length;
  if (n === 0) return null;
  return (
    <section class="selection-bar" aria-label="Selected rows">
      <strong>
        {n.toLocaleString()} {n === 1 ? 'row' : 'rows'} selected
      </strong>
      <button type="button" onClick={() => t.patch({ panel: { kind: 'run-selected' } })}>
        Run a column on them…
      </button>
      <button type="button" onClick={t.exportSelected}>
        Export them
      </button>
      <button type="button" class="danger" onClick={t.deleteSelected}>
        Delete them…
      </button>
      <button type="button" class="link" onClick={() => t.grid?.deselectAll()}>
        Clear selection
      </button>
    </section>
  );
}

/** The toolbar, wired to the table. */
function Toolbar({ t, s }: { t: TableController; s: TableState }) {
  if (!s.project) return null;
  const view = () => t.state.view;
  return (
    <TableToolbar
      view={s.view}
      columns={t.columns}
      total={s.total}
      onSearch={(q) => t.setView({ ...view(), q })}
      onRemoveRule={(i) => t.setView({ ...view(), filter: { ...view().filter, rules: view().filter.rules.filter((_, k) => k !== i) } })}
      onClearSort={() => t.setView({ ...view(), sort: [] })}
      onOpen={(kind) => t.patch({ panel: { kind } })}
      onExport={t.exportView}
      onGoTo={t.goTo}
    />
  );
}

/**
 * `/projects/{id}`: the project's rows in a full-height virtualized grid (AG Grid's infinite row
 * model) kept live over SSE, with the table's toolbar; forms open in panels beside it. The view
 * (search, filter, sort, hidden columns) is in the URL.
 */
export function ProjectTablePage({ id }: { id: string }) {
  const [s, draw] = useState<TableState | undefined>(undefined);
  const gridEl = useRef<HTMLElement>(null);
  const t = useMemo(() => new TableController(id, draw), [id]);
  useEffect(() => t.start(() => gridEl.current), [t]);
  const state = s ?? t.state;
  const { opened, menu } = state;
  return (
    <main class="page page-table">
      <TableHead t={t} s={state} />
      <ErrorNote message={state.error} />
      {state.project?.builder_status.warning && <p class="warning">{state.project.builder_status.warning}</p>}
      <Toolbar t={t} s={state} />
      <ErrorNote message={state.queryError && `The filter was not applied: ${state.queryError}`} />
      <ErrorNote message={state.editError} />
      {state.notice && (
        <p role="status" class="notice">
          {state.notice}
        </p>
      )}
      <SelectionBar t={t} s={state} />
      <p id="grid-hint" class="sr-only">
        Arrow keys move between cells. Enter or F2 edits an input cell; Enter on a tool cell opens its detail. The row number opens the
        whole row. The / key goes to the search.
      </p>
      <section ref={gridEl} class="grid grid-fill" aria-label="Rows of the project" aria-describedby="grid-hint" />
      {menu && (
        <ColumnMenu
          column={menu.column}
          anchor={menu.anchor}
          sorted={state.view.sort.some((x) => x.col_id === menu.column.col_id)}
          actions={t.columnActions(menu.column)}
          onClose={() => t.patch({ menu: undefined })}
        />
      )}
      <TablePanel t={t} s={state} />
      {opened && (
        <CellDetail
          key={`${opened.rowId}:${opened.colId}`}
          projectPath={t.path}
          cell={opened}
          column={t.columns.find((c) => c.col_id === opened.colId)}
          version={state.openedVersion}
          onExtracted={async (name) => {
            await t.reloadColumns();
            t.patch({ notice: `Column ${name} added: it fills from ${opened.column} in every row.` });
          }}
          onClose={() => {
            t.patch({ opened: undefined });
            // The focus goes back to the cell that was opened: the browser gives it back to the cell's element when it is
            // still there; when the grid drew the row again meanwhile, the grid focuses the cell. The close event comes
            // after the closing itself: a key pressed in between may already have moved on in the grid, and stays there.
            if (!gridEl.current?.contains(document.activeElement)) t.grid?.setFocusedCell(opened.rowIndex, opened.colId);
          }}
        />
      )}
    </main>
  );
}
