import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A form beside the table: a modal dialog docked to the right edge (the grid stays in view behind it).
 * Escape or Close closes it; the focus then goes back where it was.
 */
export function SidePanel(props: { title: string; onClose(): void; wide?: boolean; children: ComponentChildren }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    dialog.current?.showModal();
    return () => before?.focus?.();
  }, []);
  return (
    <dialog ref={dialog} class={props.wide ? 'side-panel wide' : 'side-panel'} aria-labelledby="side-panel-title" onClose={props.onClose}>
      <header>
        <h2 id="side-panel-title">{props.title}</h2>
        <button type="button" class="link" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </header>
      {props.children}
    </dialog>
  );
}
