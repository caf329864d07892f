/** What a user's program does over REST in the fault tests: calls with the key, waits, pages. */

export type Rest = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export function restClient(base: string, key: string): Rest {
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'service-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
  };
}

/** Polls `probe` until it answers something, or fails naming `what` (a hang, not a slow machine: the bound is generous). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 300_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(200);
  }
}

/** A project from a CSV text, once its import completed; answers its id. */
export async function csvProject(rest: Rest, name: string, csv: string): Promise<string> {
  const created = await rest('POST', '/projects', { builder_id: 'csv_import_builder', form_data: { csv_text: csv }, name });
  if (created.status !== 201) throw new Error(`POST /projects: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.project_id as string;
  await until(`the import of ${name}`, async () => {
    const p = await rest('GET', `/projects/${id}`);
    return p.body.builder_status?.type === 'completed' ? true : undefined;
  });
  return id;
}

/** Every row of a project, through the listing a user pages through. */
export async function allRows(rest: Rest, projectId: string): Promise<any[]> {
  const rows: any[] = [];
  for (let page = 1; ; page++) {
    const r = await rest('GET', `/projects/${projectId}/rows?page=${page}&page_size=100`);
    if (r.status !== 200) throw new Error(`rows page ${page}: ${r.status} ${JSON.stringify(r.body)}`);
    rows.push(...r.body.rows);
    if (page >= r.body.total_pages) return rows;
  }
}

/** The first tool column's cells by status (GET …/columns/progress). */
export async function progress(rest: Rest, projectId: string): Promise<Record<string, number> & { completed: number; total: number }> {
  return (await rest('GET', `/projects/${projectId}/columns/progress`)).body.columns[0];
}
