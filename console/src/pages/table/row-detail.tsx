import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer, Schema } from '../../api-shapes.ts';
import { ErrorNote } from '../../error-note.tsx';
import { primaryValue, text } from './cell-text.ts';
import type { Column } from './table-types.ts';

/** A cell as GET …/rows/{row_id}?include=meta answers it. */
type MetaCell = Schema<'Cell'>;

/**
 * Every cell of one row (GET …/rows/{row_id}?include=meta): input values, and for tool cells their
 * value at a glance, the whole record, the status and where the value came from. Read again when
 * `version` moves (a cell of the row changed live).
 */
export function RowDetail(props: {
  projectPath: string;
  rowId: string;
  columns: Column[];
  version: number;
  toolName(id: string | null | undefined): string | undefined;
}) {
  const [cells, setCells] = useState<Record<string, MetaCell> | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let current = true;
    api<Answer<'get_row'>>('GET', `${props.projectPath}/rows/${encodeURIComponent(props.rowId)}?include=meta`)
      .then((r) => current && setCells(r.company))
      .catch((e: Error) => current && setError(e.message));
    return () => {
      current = false;
    };
  }, [props.rowId, props.version]);
  if (error) return <ErrorNote message={error} />;
  if (!cells) return <p class="meta">Loading…</p>;
  return (
    <dl class="row-detail" data-testid="row-detail">
      {props.columns.map((c) => {
        const cell = cells[c.name];
        const shown = c.type === 'tool' ? primaryValue(cell?.value, c.primary_field) : cell?.value;
        const whole = cell && typeof cell.value === 'object' && cell.value !== null && shown !== cell.value;
        return (
          <div key={c.col_id} class="row-detail-cell">
            <dt>
              {c.name}
              {c.type === 'tool' && <span class="meta"> · {props.toolName(c.tool_id) ?? c.tool_id}</span>}
            </dt>
            <dd>
              {c.type === 'tool' && cell?.status && cell.status !== 'completed' ? (
                <span class={`badge badge-${cell.status}`}>{cell.status.replace(/_/g, ' ')}</span>
              ) : null}
              {text(shown) === '' ? <span class="meta">No value</span> : <span class="value">{text(shown)}</span>}
              {cell?.error && <p class="error-text">{cell.error}</p>}
              {whole && <pre class="value">{JSON.stringify(cell.value, null, 2)}</pre>}
              {cell?.meta && (
                <p class="meta provenance">
                  By {props.toolName(cell.meta.tool_id) ?? cell.meta.tool_id}
                  {cell.meta.provider !== cell.meta.tool_id && ` via ${cell.meta.provider}`},{' '}
                  {new Date(cell.meta.fetched_at).toLocaleString()} ·{' '}
                  {cell.meta.cached ? 'from cache (free)' : `${cell.meta.credits.toLocaleString()} credits`}
                </p>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}
