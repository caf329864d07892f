import type { ColDef, ICellRendererParams, SuppressKeyboardEventParams } from 'ag-grid-community';
import { primaryValue, text } from './cell-text.ts';
import { ColumnHeaderComp } from './column-header.tsx';
import type { LiveGridOptions } from './live-grid.ts';
import type { ApiCell, Column, Row } from './table-types.ts';

/** Rows fetched per request while scrolling (the API's largest page). */
export const BLOCK = 100;

/** A tool cell: a spinner while queued or running, the primary value once completed, a badge with the reason otherwise. */
function toolCell(p: ICellRendererParams<Row> & { primaryField?: string | null }): HTMLElement | string {
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
  if (status === 'completed') return text(primaryValue(cell.value, p.primaryField));
  span.className = `badge badge-${status}`;
  span.textContent = status.replace(/_/g, ' ');
  if (!cell.error) return span;
  // The reason beside the badge (cut by the cell's width; whole in the tooltip).
  const wrap = document.createElement('span');
  wrap.title = cell.error;
  wrap.append(span, ` ${cell.error}`);
  return wrap;
}

/** The first cell of a row: its number, a button that opens the row's detail. */
function rowNumberCell(p: ICellRendererParams<Row> & { onOpenRow(row: Row, rowIndex: number): void }): HTMLElement | string {
  if (!p.data || p.node.rowIndex === null) return '';
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'row-open';
  const n = p.node.rowIndex + 1;
  b.textContent = n.toLocaleString();
  b.title = `Open row ${n.toLocaleString()}`;
  b.setAttribute('aria-label', `Open row ${n}`);
  const row = p.data;
  const index = p.node.rowIndex;
  b.addEventListener('click', () => p.onOpenRow(row, index));
  return b;
}

/**
 * The rows the grid shows, by id, as the grid holds them (noted when a cell reads its row: a block
 * the grid fetched twice keeps only one answer, and it is that one): a live update changes them in
 * place, then the cells are drawn again.
 */
export class ShownRows {
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

/** Column widths a person set, per project, kept in the browser; widths fitted to the content are kept for the page's life. */
export class Widths {
  private readonly key: string;
  readonly set: Record<string, number>;
  readonly fitted: Record<string, number> = {};
  constructor(projectId: string) {
    this.key = `table-widths:${projectId}`;
    try {
      this.set = JSON.parse(localStorage.getItem(this.key) ?? '{}') as Record<string, number>;
    } catch {
      this.set = {};
    }
  }
  of(colId: string): number | undefined {
    return this.set[colId] ?? this.fitted[colId];
  }
  remember(colId: string, width: number): void {
    this.set[colId] = Math.round(width);
    localStorage.setItem(this.key, JSON.stringify(this.set));
  }
}

/** Input values keep their kind when typed over: a number stays a number when the text reads as one. */
function typed(before: unknown, typedText: unknown): unknown {
  const s = typedText === null || typedText === undefined ? '' : String(typedText);
  if (typeof before === 'number' && s.trim() !== '' && Number.isFinite(Number(s))) return Number(s);
  return s === '' ? null : s;
}

/** A `/` on a cell that is not being edited: left to the page (it goes to the search). */
const slashKey = (p: SuppressKeyboardEventParams<Row>) => p.event.key === '/' && !p.editing && !p.event.ctrlKey && !p.event.metaKey;

export interface Grid {
  columns: Column[];
  shown: ShownRows;
  widths: Widths;
  errors: Map<string, string>;
}

/** The grid's columns: the row number, then the project's columns (hidden ones left out); tool cells open their detail on click or Enter. */
export function columnDefs(
  g: Grid,
  o: LiveGridOptions,
  open: (c: Column, row: Row | undefined, rowIndex: number | null) => void,
): ColDef<Row>[] {
  const hidden = new Set(o.view.current.hidden);
  const rowNumber: ColDef<Row> = {
    colId: '__row',
    headerName: '#',
    pinned: 'left',
    width: 76,
    resizable: false,
    suppressMovable: true,
    sortable: false,
    cellRenderer: rowNumberCell,
    cellRendererParams: { onOpenRow: o.onOpenRow },
    cellClass: 'row-number',
  };
  return [
    rowNumber,
    ...g.columns.map(
      (c): ColDef<Row> => ({
        colId: c.col_id,
        headerName: c.name,
        headerComponent: ColumnHeaderComp,
        headerComponentParams: { column_: c, ctx: o.header },
        hide: hidden.has(c.col_id),
        sortable: false,
        minWidth: 90,
        ...(g.widths.of(c.col_id) ? { width: g.widths.of(c.col_id) } : {}),
        // `/` goes to the search (the toolbar listens), not into the focused cell as typed text.
        suppressKeyboardEvent: slashKey,
        cellClassRules: { 'cell-refused': (p) => Boolean(p.data && g.errors.has(`${p.data.id}:${c.col_id}`)) },
        ...(c.type === 'tool'
          ? {
              valueGetter: (p) => {
                g.shown.note(p.data);
                return p.data?.company[c.name];
              },
              cellRenderer: toolCell,
              cellRendererParams: { primaryField: c.primary_field },
              cellClass: 'tool-cell',
              onCellClicked: (p) => open(c, p.data, p.rowIndex),
              // Enter on the focused cell opens its detail. Here rather than in onCellKeyDown, which the grid
              // calls later: the key is taken now, so it does not also press the dialog's button.
              suppressKeyboardEvent: (p) => {
                if (slashKey(p)) return true;
                if (p.event.type !== 'keydown' || p.event.key !== 'Enter' || p.editing || !p.data) return false;
                p.event.preventDefault();
                open(c, p.data, p.node.rowIndex);
                return true;
              },
            }
          : {
              // Input cells are edited in place: Enter or F2 (or typing) starts, Enter saves, Escape cancels.
              editable: true,
              valueGetter: (p) => {
                g.shown.note(p.data);
                return text(p.data?.company[c.name]?.value);
              },
              valueSetter: (p) => {
                if (!p.data) return false;
                const before = p.data.company[c.name]?.value;
                const value = typed(before, p.newValue);
                if (value === before || text(value) === text(before)) return false;
                p.data.company[c.name] = { value };
                return true;
              },
              tooltipValueGetter: (p) => (p.data ? g.errors.get(`${p.data.id}:${c.col_id}`) : undefined),
            }),
      }),
    ),
  ];
}
