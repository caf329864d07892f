import { Elysia } from 'elysia';
import { ServiceError, validationError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import type { Kernel } from '../../core/kernel.ts';
import type { Project } from '../../core/model.ts';
import { admitCall } from '../../core/services/admission.ts';
import { requireApiAccess } from '../../core/identity/api-keys.ts';
import { exportCsv } from '../../core/services/export.ts';
import { type ExportGrant, verifyExportLink } from '../../core/services/export-links.ts';
import { errorResponse } from './error-response.ts';
import { exportOperation } from './export-doc.ts';
import { projectOfCaller } from './project-access.ts';

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
    try {
      out[name] = JSON.parse(raw);
    } catch {
      throw validationError(`${name} is not valid JSON (URL-encode it, as for GET rows)`, [{ path: name, message: 'is not valid JSON' }]);
    }
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
export function exportRoute(kernel: Kernel) {
  const path = `${kernel.config.basePath}/projects/:project_id/export.csv`;
  return new Elysia({ name: 'workflow-export' }).get(
    path,
    async ({ request, params }) => {
      const requestId = newId();
      try {
        const projectId = (params as Record<string, string>).project_id as string;
        const url = new URL(request.url);
        const token = url.searchParams.get('token');
        let project: Project | null | undefined;
        let query: ExportGrant['query'];
        if (token !== null) {
          const grant = await verifyExportLink(kernel, token, projectId);
          project = await kernel.storage.projects.get(grant.workspaceId, projectId);
          const workspace = await kernel.storage.workspaces.get(grant.workspaceId);
          if (!project || !workspace)
            throw new ServiceError('not_found', `Project ${projectId} not found (deleted since the link was made)`);
          // A link lives as long as what made it: its key, and the plan's API access.
          if (grant.keyId && !(await kernel.storage.workspaces.keyIsLive(workspace.id, grant.keyId))) {
            throw new ServiceError('unauthorized', 'This download link stopped working: the API key that made it was revoked');
          }
          requireApiAccess(workspace);
          await admitCall(kernel, workspace, `link:${projectId}`);
          query = grant.query;
        } else {
          project = (await projectOfCaller(kernel, request, projectId)).project;
          query = queryOf(url);
        }
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
            'x-request-id': requestId,
          },
        });
      } catch (e) {
        return errorResponse(e, requestId);
      }
    },
    { detail: exportOperation as never },
  );
}
