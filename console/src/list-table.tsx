import type { ComponentChildren } from 'preact';

/**
 * The settings pages' tables: a caption for screen readers, a header row, and (when rows carry
 * buttons) a last column whose heading only screen readers hear. The rows are the page's own.
 */
export function ListTable(props: { caption: string; headings: string[]; actions?: boolean; children: ComponentChildren }) {
  return (
    <table class="list">
      <caption class="sr-only">{props.caption}</caption>
      <thead>
        <tr>
          {props.headings.map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
          {props.actions && (
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
