import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { Kernel } from '../../core/kernel.ts';
import type { AnyOperation } from '../../core/operations/operation.ts';
import { mcpAppHtml } from '../../mcp-app/build.ts';
import { fitted } from './result-size.ts';
import { operationData, RESOURCE_NOT_FOUND, RpcError } from './operation-call.ts';

/**
 * Projects as MCP resources (docs/mcp.md): `workflow://projects/{project_id}` (what get_project
 * answers) and `workflow://projects/{project_id}/rows{?page,page_size}` (a page of rows in the
 * `values` format). resources/list names the caller's most recent projects.
 */

const PROJECT = new UriTemplate('workflow://projects/{project_id}');
const ROWS = new UriTemplate('workflow://projects/{project_id}/rows{?page,page_size}');
const RECENT = 50;
const JSON_TYPE = 'application/json';

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: PROJECT.toString(),
    name: 'project',
    title: 'Project details',
    description: 'A project: its columns, a sample row, the row count and the builder status (as get_project answers).',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: ROWS.toString(),
    name: 'project_rows',
    title: 'Rows of a project',
    description: 'A page of a project’s rows as {column: value} maps (page from 1, page_size 1 to 100, default 50).',
    mimeType: JSON_TYPE,
  },
];

type Ops = (name: string) => AnyOperation;

/** The project table MCP App (mcp-app/): tools that name a project declare it (`_meta.ui.resourceUri`). */
export const TABLE_APP_URI = 'ui://workflow-service/project-table.html';
const APP_MIME = 'text/html;profile=mcp-app';
/** Nothing beyond the document itself: the app reaches the server only through the host's tool calls. */
const APP_UI_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } };

const TABLE_APP: Resource = {
  uri: TABLE_APP_URI,
  name: 'project_table',
  title: 'Project table',
  description:
    'An interactive table of a project (MCP App): its rows, cell states live, next page, a filter, and running pending cells with the estimate first.',
  mimeType: APP_MIME,
  _meta: APP_UI_META,
};

export async function listResources(kernel: Kernel, op: Ops, authInfo: AuthInfo | undefined): Promise<{ resources: Resource[] }> {
  const data = (await operationData(kernel, op('list_projects'), authInfo, { query: { limit: String(RECENT) } })) as {
    projects: { id: string; name: string; company_count: number; updatedAt?: string }[];
  };
  return {
    resources: [
      TABLE_APP,
      ...data.projects.map((p) => ({
        uri: PROJECT.expand({ project_id: p.id }),
        name: p.name,
        title: p.name,
        description: `Project with ${p.company_count} rows; its rows: ${ROWS.expand({ project_id: p.id })}`,
        mimeType: JSON_TYPE,
      })),
    ],
  };
}

/** A resource URI read as what it names: a project, or a page of its rows (query parameters in any order, any left out). */
function parseUri(uri: string): { projectId: string; rows?: { page?: string; page_size?: string } } | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'workflow:' || url.host !== 'projects') return undefined;
  let parts: string[];
  try {
    parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined; // a malformed %-escape names nothing
  }
  const [id, sub, ...rest] = parts;
  if (!id || rest.length > 0 || (sub !== undefined && sub !== 'rows')) return undefined;
  if (sub === undefined) return url.search ? undefined : { projectId: id };
  const page = url.searchParams.get('page') ?? undefined;
  const pageSize = url.searchParams.get('page_size') ?? undefined;
  return { projectId: id, rows: { ...(page !== undefined ? { page } : {}), ...(pageSize !== undefined ? { page_size: pageSize } : {}) } };
}

export async function readResource(kernel: Kernel, op: Ops, authInfo: AuthInfo | undefined, uri: string): Promise<ReadResourceResult> {
  if (uri === TABLE_APP_URI) return { contents: [{ uri, mimeType: APP_MIME, text: await mcpAppHtml(), _meta: APP_UI_META }] };
  const named = parseUri(uri);
  if (!named) {
    throw new RpcError(
      RESOURCE_NOT_FOUND,
      `Unknown resource ${uri.slice(0, 200)}: resources/templates/list names the ones this server has`,
    );
  }
  const { projectId, rows } = named;
  let data: unknown;
  if (rows) {
    const query: Record<string, string> = { format: 'values', ...rows };
    data = await operationData(kernel, op('get_project_rows'), authInfo, { params: { project_id: projectId }, query }, RESOURCE_NOT_FOUND);
  } else {
    data = await operationData(kernel, op('get_project'), authInfo, { params: { project_id: projectId } }, RESOURCE_NOT_FOUND);
  }
  // The same bound as a tool result: a page too large is cut to the page that fits, and says so.
  const envelope = fitted(kernel, { ok: true, data }).envelope as { ok: boolean; data?: unknown; truncated?: string };
  const body = envelope.ok ? { ...(envelope.data as object), ...(envelope.truncated ? { truncated: envelope.truncated } : {}) } : envelope;
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(body) }] };
}
