import { ServiceError, validationError } from '../../core/errors.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Project } from '../../core/model.ts';
import { admitCall } from '../../core/services/admission.ts';
import { requireApiAccess } from '../../core/identity/api-keys.ts';
import { exportCsv } from '../../core/services/export.ts';
import { type ExportGrant, verifyExportLink } from '../../core/services/export-links.ts';
import { exportOperation } from './export-doc.ts';
import { exactJson } from './rest-input.ts';
import type { RouteSpec } from './route-chain.ts';

/** The JSON query parameters of GET rows, parsed (a malformed one is a 422 naming it). */
function queryOf(url: URL): ExportGrant['query'] {
  const values = url.searchParams.get('values') ?? 'primary';
  if (values !== 'primary' && values !== 'json') {
    throw validationError('values is "primary" (a tool\'s main field, the default) or "json" (its whole result)', [
      { path: 'values', message: 'must be "primary" or "json"' },
    ]);
  }
  const out: ExportGrant['query'] = {
    bom: ['1', 'true'].includes(url.searchParams.get('bom') ?? ''),
    escape_formulas: !['0', 'false'].includes(url.searchParams.get('escape_formulas') ?? ''),
    values,
  };
  for (const name of ['filter_groups', 'sort_rules', 'columns'] as const) {
    const raw = url.searchParams.get(name);
    if (raw === null) continue;
    out[name] = exactJson(raw, name, 422, '; URL-encode it, as for GET rows', name) as never;
  }
  return out;
}

/** A file name for the download: the project's name, in the characters every system takes. */
const fileName = (project: Project) =>
  `${
    project.name
      .replace(/[^\w .-]+/g, '_')
      .trim()
      .slice(0, 100) || 'export'
  }.csv`;

/**
 * `GET {BASE_PATH}/projects/{project_id}/export.csv` (docs/enrichment.md): the rows as CSV, streamed, with the
 * same filter_groups, sort_rules and columns as GET rows. With an API key or a console session, or
 * with `token`, a signed link made by export_project (15 minutes; the export it was made for).
 */
export const exportRoute: RouteSpec = {
  method: 'GET',
  path: '/projects/{project_id}/export.csv',
  caller: (request) => (new URL(request.url).searchParams.has('token') ? 'none' : 'key-or-session'),
  projectParam: 'project_id',
  doc: exportOperation,
  async handle(ctx) {
    const { kernel } = ctx;
    const url = new URL(ctx.request.url);
    const { project, query } = ctx.caller
      ? { project: ctx.caller.project as Project, query: queryOf(url) }
      : await linkedExport(kernel, url.searchParams.get('token') ?? '', ctx.params.project_id ?? '');
    const body = await exportCsv(kernel, project, query, {
      bom: query.bom === true,
      escapeFormulas: query.escape_formulas !== false,
      values: query.values ?? 'primary',
    });
    return new Response(body, {
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="${fileName(project)}"`,
        'cache-control': 'no-store',
      },
    });
  },
};

/** The project and query a signed link grants, while what made it lives (its key, the plan's API access). */
async function linkedExport(kernel: Kernel, token: string, projectId: string): Promise<{ project: Project; query: ExportGrant['query'] }> {
  const grant = await verifyExportLink(kernel, token, projectId);
  const project = await kernel.storage.projects.get(grant.workspaceId, projectId);
  const workspace = await kernel.storage.workspaces.get(grant.workspaceId);
  if (!project || !workspace) throw new ServiceError('not_found', `Project ${projectId} not found (deleted since the link was made)`);
  if (grant.keyId && !(await kernel.storage.workspaces.keyIsLive(workspace.id, grant.keyId))) {
    throw new ServiceError('unauthorized', 'This download link stopped working: the API key that made it was revoked');
  }
  requireApiAccess(workspace);
  await admitCall(kernel, workspace, `link:${projectId}`);
  return { project, query: grant.query };
}
