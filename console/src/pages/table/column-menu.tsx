import { useEffect, useRef } from 'preact/hooks';
import type { Column } from './table-types.ts';
import { RUN_MODES, type RunMode } from './tool-column.tsx';

/** What a column's menu can do; the page carries each out (most open a panel or ask first). */
export interface ColumnActions {
  sort(direction: 'asc' | 'desc', asNumber: boolean): void;
  clearSort(): void;
  filter(): void;
  hide(): void;
  fit(): void;
  rename(): void;
  remove(): void;
  run(mode: RunMode): void;
  edit(): void;
}

/**
 * The menu of a column's header (⋮): sort, filter, hide, fit, rename, delete, and for tool columns
 * the runs and the column's settings. Arrow keys move between items, Escape or a click elsewhere closes it.
 */
export function ColumnMenu(props: { column: Column; anchor: HTMLElement; sorted: boolean; actions: ColumnActions; onClose(): void }) {
  const menu = useRef<HTMLDivElement>(null);
  const { column, actions } = props;
  const box = props.anchor.getBoundingClientRect();
  const left = Math.max(8, Math.min(box.right - 240, innerWidth - 248));
  useEffect(() => {
    const first = menu.current?.querySelector<HTMLButtonElement>('[role=menuitem]');
    first?.focus();
    const away = (e: MouseEvent) => {
      if (!menu.current?.contains(e.target as Node)) props.onClose();
    };
    // Next turn: the click that opened the menu is not a click elsewhere.
    const t = setTimeout(() => document.addEventListener('mousedown', away));
    return () => {
      clearTimeout(t);
      document.removeEventListener('mousedown', away);
    };
  }, []);
  const item = (label: string, run: () => void, danger = false) => (
    <button
      type="button"
      role="menuitem"
      class={danger ? 'danger' : undefined}
      onClick={() => {
        props.onClose();
        run();
      }}
    >
      {label}
    </button>
  );
  const onKeyDown = (e: KeyboardEvent) => {
    const items = [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role=menuitem]') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === 'Escape') {
      e.preventDefault();
      props.onClose();
      props.anchor.focus();
    } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = items[(at + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length];
      next?.focus();
    }
  };
  return (
    <div
      ref={menu}
      class="menu"
      role="menu"
      aria-label={`Column ${column.name}`}
      style={{ top: `${box.bottom + 4}px`, left: `${left}px` }}
      onKeyDown={onKeyDown}
    >
      {item('Sort A → Z', () => actions.sort('asc', false))}
      {item('Sort Z → A', () => actions.sort('desc', false))}
      {item('Sort 1 → 9 (as numbers)', () => actions.sort('asc', true))}
      {item('Sort 9 → 1 (as numbers)', () => actions.sort('desc', true))}
      {props.sorted && item('Remove this sort', actions.clearSort)}
      <hr />
      {item('Filter by this column…', actions.filter)}
      {item('Hide column', actions.hide)}
      {item('Fit width to content', actions.fit)}
      <hr />
      {column.type === 'tool' && (
        <>
          {RUN_MODES.map((m) => item(`${m.label}…`, () => actions.run(m.mode)))}
          {item('Edit column…', actions.edit)}
          <hr />
        </>
      )}
      {item('Rename…', actions.rename)}
      {item('Delete column…', actions.remove, true)}
    </div>
  );
}
