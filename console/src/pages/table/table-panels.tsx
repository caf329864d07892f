import { api } from '../../api.ts';
import { QueryBuilder } from './query-builder.tsx';
import { RowDetail } from './row-detail.tsx';
import { SidePanel } from './side-panel.tsx';
import type { Panel, TableController, TableState } from './table-controller.ts';
import { AddRowForm, RenameForm, RunSelected } from './table-forms.tsx';
import type { Project } from './table-types.ts';
import { RUN_MODES, RunCells, ToolColumnForm } from './tool-column.tsx';

interface PanelProps {
  t: TableController;
  s: TableState;
  panel: Panel;
  close(): void;
}

/** The panels that change how the table is seen: filter and sort, columns shown, a row, the builder's log. */
function ViewPanel({ t, s, panel, close }: PanelProps) {
  const columns = t.columns;
  const view = s.view;
  if (panel.kind === 'filter')
    return (
      <SidePanel title="Filter and sort" wide onClose={close}>
        <QueryBuilder
          columns={columns}
          filter={view.filter}
          sort={view.sort}
          error={s.queryError}
          onApply={(filter, sort) => t.setView({ ...t.state.view, filter, sort })}
        />
      </SidePanel>
    );
  if (panel.kind === 'columns')
    return (
      <SidePanel title="Columns shown" onClose={close}>
        <fieldset class="stack">
          <legend>Untick a column to hide it (the URL keeps the choice).</legend>
          {columns.map((c) => (
            <label key={c.col_id}>
              <input
                type="checkbox"
                checked={!view.hidden.includes(c.col_id)}
                onChange={(e) => {
                  const hidden = t.state.view.hidden.filter((x) => x !== c.col_id);
                  t.setView({ ...t.state.view, hidden: (e.target as HTMLInputElement).checked ? hidden : [...hidden, c.col_id] });
                }}
              />{' '}
              {c.name}
            </label>
          ))}
        </fieldset>
      </SidePanel>
    );
  if (panel.kind === 'row')
    return (
      <SidePanel title={`Row ${(panel.rowIndex + 1).toLocaleString()}`} wide onClose={close}>
        <RowDetail
          projectPath={t.path}
          rowId={panel.rowId}
          columns={columns}
          version={s.rowVersion}
          toolName={(id) => (id ? s.toolNames.get(id) : undefined)}
        />
      </SidePanel>
    );
  if (panel.kind === 'log')
    return (
      <SidePanel title="Builder log" wide onClose={close}>
        <ol class="log">
          {(s.project?.lead_gen_execution_log ?? []).map((e, i) => (
            <li key={i}>
              <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>{' '}
              {/* "page 3: 10 rows written" names its step already: not "page page 3". */}
              {e.message.startsWith(e.step) ? null : <strong>{e.step} </strong>}
              {e.message}
            </li>
          ))}
        </ol>
      </SidePanel>
    );
  return null;
}

/** The panels that change the table: columns added, edited, renamed, run; a row added; the project renamed. */
function EditPanel({ t, s, panel, close }: PanelProps) {
  const done = (notice?: string) => async () => {
    await t.reloadColumns();
    close();
    if (notice) t.patch({ notice });
  };
  switch (panel.kind) {
    case 'add-column':
      return (
        <SidePanel title="Add a tool column" wide onClose={close}>
          <ToolColumnForm
            projectPath={t.path}
            onDone={(name) => done(`Column ${name} added. Run it from its menu (⋮), or it runs on new rows if you chose auto-run.`)()}
          />
        </SidePanel>
      );
    case 'edit-column':
      return (
        <SidePanel title={`Edit column ${panel.column.name}`} wide onClose={close}>
          <ToolColumnForm
            projectPath={t.path}
            column={panel.column}
            onDone={(name) =>
              done(
                `Column ${name} saved. Cells already filled keep their values: re-run them from the column's menu to apply the change.`,
              )()
            }
          />
        </SidePanel>
      );
    case 'rename-column':
      return (
        <SidePanel title={`Rename column ${panel.column.name}`} onClose={close}>
          <RenameForm
            label="Column name"
            value={panel.column.name}
            save={(name) => api('PATCH', `${t.path}/columns/${encodeURIComponent(panel.column.col_id)}`, { name })}
            onDone={done()}
          />
        </SidePanel>
      );
    case 'rename-project':
      return (
        <SidePanel title="Rename the project" onClose={close}>
          <RenameForm
            label="Project name"
            value={s.project?.name ?? ''}
            save={(name) => api<Project>('PATCH', t.path, { name }).then((p) => t.patch({ project: { ...t.state.project, ...p } }))}
            onDone={close}
          />
        </SidePanel>
      );
    case 'add-row':
      return (
        <SidePanel title="Add a row" onClose={close}>
          <AddRowForm
            projectPath={t.path}
            columns={t.columns}
            onDone={() => {
              close();
              t.patch({ notice: 'Row added at the end of the table.' });
              // Shown where it went, once the grid counts it: the end of the table.
              t.showRow((s.total ?? s.project?.row_count ?? 0) + 1);
            }}
          />
        </SidePanel>
      );
    case 'run':
      return (
        <SidePanel title={RUN_MODES.find((m) => m.mode === panel.mode)?.label ?? 'Run cells'} onClose={close}>
          <RunCells projectPath={t.path} column={panel.column} mode={panel.mode} rowIds={panel.rowIds} />
        </SidePanel>
      );
    case 'run-selected':
      return (
        <SidePanel title="Run a column on the selected rows" onClose={close}>
          <RunSelected projectPath={t.path} columns={t.columns} rowIds={s.selected.map((r) => String(r.id))} />
        </SidePanel>
      );
    default:
      return <ViewPanel t={t} s={s} panel={panel} close={close} />;
  }
}

/** The open panel of the table, if any. */
export function TablePanel({ t, s }: { t: TableController; s: TableState }) {
  if (!s.panel) return null;
  return <EditPanel t={t} s={s} panel={s.panel} close={() => t.patch({ panel: undefined })} />;
}
