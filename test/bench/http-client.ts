import type { Backend } from './backends.ts';

/** The two REST calls the bench makes, with the service-api-key header; any non-2xx throws. */

/** Where the service answers and the workspace key (a Backend, or a service in its own process). */
export type Api = Pick<Backend, 'url' | 'key'>;

export interface RowsPage {
  ids: string[];
  totalRows: number;
}

export async function getRows(b: Api, projectId: string, query: string): Promise<RowsPage> {
  const res = await fetch(`${b.url}/projects/${projectId}/rows?${query}`, {
    headers: { 'service-api-key': b.key, accept: 'application/json' },
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET rows answered ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { rows?: { id: string }[]; total_rows?: unknown };
  if (typeof body.total_rows !== 'number' || !Array.isArray(body.rows)) {
    throw new Error(`GET rows answered without rows/total_rows: ${text.slice(0, 300)}`);
  }
  return { ids: body.rows.map((r) => r.id), totalRows: body.total_rows };
}

export async function postRow(b: Api, projectId: string, body: unknown): Promise<void> {
  const res = await fetch(`${b.url}/projects/${projectId}/rows`, {
    method: 'POST',
    headers: { 'service-api-key': b.key, accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201 && res.status !== 200) throw new Error(`POST row answered ${res.status}: ${text.slice(0, 300)}`);
}
