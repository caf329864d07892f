import { signal } from './signal.ts';

/** Client-side navigation over the History API: links with a path of the console never reload the page. */
export const location$ = signal(`${location.pathname}${location.search}`);

export function navigate(to: string): void {
  history.pushState(null, '', to);
  location$.set(to);
}

addEventListener('popstate', () => location$.set(`${location.pathname}${location.search}`));

document.addEventListener('click', (e) => {
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || a.hasAttribute('data-reload')) return;
  e.preventDefault();
  navigate(url.pathname + url.search);
});
