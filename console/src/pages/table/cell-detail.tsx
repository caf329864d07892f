import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer, Schema } from '../../api-shapes.ts';
import { ErrorNote } from '../../error-note.tsx';
import { primaryValue, text } from './cell-text.ts';
import type { Column } from './table-types.ts';

/** A cell as GET …/rows/{row_id}?include=meta answers it (meta, where its value came from: null when no tool has run on it). */
type DetailCell = Schema<'Cell'>;

/** The tool cell a person opened in the grid. */
export interface OpenedCell {
  rowId: string;
  /** Where the grid shows it (to give the focus back to it). */
  rowIndex: number;
  colId: string;
  column: string;
}

/** A JSONata name: backticks unless it is a plain identifier. */
const jsonataName = (s: string) => (/^[A-Za-z_$][\w$]*$/.test(s) ? s : `\`${s.replace(/`/g, '')}\``);

/**
 * "Extract to column" (as in Clay): one field of a record-valued tool column becomes a formula column
 * of its own, filled at once in every row and on rows added later.
 */
function ExtractFields(props: { projectPath: string; column: string; value: Record<string, unknown>; onExtracted(name: string): void }) {
  const [error, setError] = useState<string | undefined>();
  const extract = async (field: string) => {
    setError(undefined);
    const name = `${props.column} ${field}`;
    try {
      const col = await api<Answer<'create_column'>>('POST', `${props.projectPath}/columns`, {
        name,
        tool_id: 'formula',
        config: { expression: `${jsonataName(props.column)}.${jsonataName(field)}` },
        auto_run: true,
      });
      await api('POST', `${props.projectPath}/columns/run`, { col_ids: [col.col_id] });
      props.onExtracted(name);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <>
      <h3>Fields</h3>
      <table class="fields">
        <tbody>
          {Object.entries(props.value).map(([field, v]) => (
            <tr key={field}>
              <th scope="row">{field}</th>
              <td>{text(v)}</td>
              <td>
                <button type="button" class="link" aria-label={`Extract ${field} to a column`} onClick={() => extract(field)}>
                  Extract to column
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorNote message={error} />
    </>
  );
}

/** The value whole: objects and lists pretty-printed, nothing as a dash. */
function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined || value === '') return <p class="meta">No value</p>;
  if (typeof value === 'object')
    return (
      <pre class="value" data-testid="cell-value">
        {JSON.stringify(value, null, 2)}
      </pre>
    );
  return (
    <p class="value" data-testid="cell-value">
      {String(value)}
    </p>
  );
}

/**
 * The modal detail of a tool cell: its value, status and error, and its provenance (tool, provider,
 * when found, credits, whether from the cache), read with include=meta when opened and again when
 * `version` changes (the cell changed live). Escape or Close closes it.
 */
export function CellDetail({
  projectPath,
  cell,
  column,
  version,
  onExtracted,
  onClose,
}: {
  projectPath: string;
  cell: OpenedCell;
  column?: Column;
  version: number;
  onExtracted(name: string): void;
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [detail, setDetail] = useState<DetailCell | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => dialog.current?.showModal(), []);
  useEffect(() => {
    let current = true;
    api<Answer<'get_row'>>('GET', `${projectPath}/rows/${encodeURIComponent(cell.rowId)}?include=meta`)
      .then((row) => {
        if (!current) return;
        setError(undefined);
        const found = row.company[cell.column];
        if (found) setDetail(found);
        else setError(`This row has no column ${cell.column} any more.`);
      })
      .catch((e: Error) => current && setError(e.message));
    return () => {
      current = false;
    };
  }, [projectPath, cell.rowId, cell.column, version]);

  const meta = detail?.meta ?? null;
  const primaryField = column?.type === 'tool' ? column.primary_field : null;
  return (
    <dialog ref={dialog} class="cell-detail" aria-labelledby="cell-detail-title" onClose={onClose}>
      <h2 id="cell-detail-title">Cell detail · {cell.column}</h2>
      <ErrorNote message={error} />
      {!detail && !error && <p class="meta">Loading…</p>}
      {detail && (
        <>
          <dl class="detail">
            <dt>Column</dt>
            <dd>{cell.column}</dd>
            <dt>Row</dt>
            <dd>{(cell.rowIndex + 1).toLocaleString()}</dd>
            <dt>Status</dt>
            <dd data-testid="cell-status">
              <span class={`badge badge-${detail.status}`}>{detail.status.replace(/_/g, ' ')}</span>
            </dd>
            {detail.error && (
              <>
                <dt>Error</dt>
                <dd data-testid="cell-error">{detail.error}</dd>
              </>
            )}
          </dl>
          <h3>Provenance</h3>
          {meta ? (
            <dl class="detail" data-testid="provenance">
              <dt>Tool</dt>
              <dd data-testid="meta-tool">
                <code>{meta.tool_id}</code>
              </dd>
              <dt>Provider</dt>
              <dd data-testid="meta-provider">
                <code>{meta.provider}</code>
              </dd>
              <dt>Fetched at</dt>
              <dd data-testid="meta-fetched-at">
                <time dateTime={meta.fetched_at}>{new Date(meta.fetched_at).toLocaleString()}</time>
              </dd>
              <dt>Credits</dt>
              <dd data-testid="meta-credits">
                {meta.credits.toLocaleString()}
                {meta.cached && <span data-testid="meta-cached"> · from cache (free)</span>}
              </dd>
            </dl>
          ) : (
            <p data-testid="provenance">Not run yet</p>
          )}
          <h3>Value</h3>
          {primaryField && primaryValue(detail.value, primaryField) !== detail.value && (
            <p data-testid="cell-primary">
              <strong>{primaryField}:</strong> {text(primaryValue(detail.value, primaryField))}
            </p>
          )}
          <Value value={detail.value} />
          {detail.value !== null && typeof detail.value === 'object' && !Array.isArray(detail.value) && (
            <ExtractFields
              projectPath={projectPath}
              column={cell.column}
              value={detail.value as Record<string, unknown>}
              onExtracted={(name) => {
                dialog.current?.close();
                onExtracted(name);
              }}
            />
          )}
        </>
      )}
      <div class="actions">
        <button type="button" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
