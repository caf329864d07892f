import { useEffect, useRef, useState } from 'preact/hooks';
import type { Column } from './table-types.ts';
import { type Group, OPERATORS, type Rule } from './query-builder.tsx';
import type { ViewState } from './view-state.ts';

const isGroup = (r: Rule | Group): r is Group => 'rules' in r;

/** A filter rule as a person reads it: "Name contains 7", "Email status is error". */
export function ruleText(r: Rule | Group, columns: Column[]): string {
  if (isGroup(r)) return `${r.type === 'and' ? 'all' : 'any'} of ${r.rules.length} ${r.rules.length === 1 ? 'rule' : 'rules'}`;
  const name = columns.find((c) => c.col_id === r.col_id)?.name ?? 'a deleted column';
  const op = OPERATORS.find(([o]) => o === r.operator)?.[1] ?? r.operator;
  const value =
    r.operator === 'is_empty' || r.operator === 'is_not_empty'
      ? ''
      : ` ${Array.isArray(r.value) ? r.value.join(', ') : String(r.value ?? '')}`;
  return `${name}${r.field === 'status' ? ' status' : ''} ${op}${value}`;
}

/**
 * The table's toolbar: search (`/` goes to it), the filters that are on as chips (each removable),
 * the sort, and the buttons that open the table's panels.
 */
export function TableToolbar(props: {
  view: ViewState;
  columns: Column[];
  total: number | undefined;
  onSearch(q: string): void;
  onRemoveRule(index: number): void;
  onClearSort(): void;
  onOpen(panel: 'filter' | 'columns' | 'add-column' | 'add-row'): void;
  onExport(): void;
  onGoTo(row: number): void;
}) {
  const { view, columns } = props;
  const [q, setQ] = useState(view.q);
  const search = useRef<HTMLInputElement>(null);
  // Typing pauses before the rows are asked for again.
  useEffect(() => {
    if (q === view.q) return;
    const t = setTimeout(() => props.onSearch(q), 300);
    return () => clearTimeout(t);
  }, [q]);
  useEffect(() => {
    const slash = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (
        e.key !== '/' ||
        e.ctrlKey ||
        e.metaKey ||
        e.altKey ||
        t.closest('input, textarea, select, [contenteditable], dialog, .ag-cell-inline-editing')
      )
        return;
      e.preventDefault();
      search.current?.focus();
    };
    document.addEventListener('keydown', slash);
    return () => document.removeEventListener('keydown', slash);
  }, []);
  const sortText = view.sort
    .map((s) => `${columns.find((c) => c.col_id === s.col_id)?.name ?? '?'} ${s.direction === 'asc' ? '↑' : '↓'}`)
    .join(', ');
  const hidden = view.hidden.filter((id) => columns.some((c) => c.col_id === id)).length;
  return (
    <div class="table-toolbar" role="toolbar" aria-label="Table">
      <input
        ref={search}
        type="search"
        class="table-search"
        aria-label="Search rows"
        placeholder="Search rows  ( / )"
        value={q}
        onInput={(e) => setQ((e.target as HTMLInputElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') props.onSearch(q);
        }}
      />
      <button type="button" onClick={() => props.onOpen('filter')}>
        Filter{view.filter.rules.length ? ` (${view.filter.rules.length})` : ''}
      </button>
      {view.filter.rules.map((r, i) => (
        <span class="chip" key={i}>
          {i > 0 && <span class="meta">{view.filter.type === 'and' ? 'and ' : 'or '}</span>}
          {ruleText(r, columns)}
          <button type="button" class="link" aria-label={`Remove filter ${ruleText(r, columns)}`} onClick={() => props.onRemoveRule(i)}>
            ×
          </button>
        </span>
      ))}
      {view.sort.length > 0 && (
        <span class="chip">
          Sorted by {sortText}
          <button type="button" class="link" aria-label="Remove the sort" onClick={props.onClearSort}>
            ×
          </button>
        </span>
      )}
      <button type="button" onClick={() => props.onOpen('columns')}>
        Columns{hidden ? ` (${hidden} hidden)` : ''}
      </button>
      <form
        class="go-to-row"
        onSubmit={(e) => {
          e.preventDefault();
          const n = Number((e.currentTarget.elements.namedItem('row') as HTMLInputElement).value);
          if (Number.isInteger(n) && n >= 1) props.onGoTo(n);
        }}
      >
        <label for="go-to-row">Go to row</label>
        <input id="go-to-row" name="row" type="number" min={1} max={props.total} />
        <button type="submit">Go</button>
      </form>
      <span class="toolbar-end">
        <button type="button" onClick={props.onExport}>
          Export CSV
        </button>
        <button type="button" onClick={() => props.onOpen('add-row')}>
          + Row
        </button>
        <button type="button" class="primary" onClick={() => props.onOpen('add-column')}>
          + Column
        </button>
      </span>
    </div>
  );
}
