import { randomBytes } from 'node:crypto';
import { ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import type { Project } from '../model.ts';
import { admitCall } from './admission.ts';
import { hashApiKey, requireApiAccess } from '../identity/api-keys.ts';
import { checkRowQuota } from './quotas.ts';
import { insertRows, MAX_BATCH_ROWS } from './row-insert.ts';
import { cellsOfEach } from './rows.ts';

/** The address of an inbound URL; its last segment is the secret. */
const inboundUrl = (kernel: Kernel, token: string) =>
  `${kernel.oauth.issuer.replace(/\/+$/, '')}${kernel.config.basePath}/inbound/${token}`;

/**
 * POST /projects/{id}/inbound: a new inbound URL for the project (docs/enrichment.md). The URL is the
 * credential — a program that holds no API key posts rows to it — so only its SHA-256 is kept and
 * the URL is shown once; asking again replaces it (the old one stops working).
 */
export async function createInboundUrl(kernel: Kernel, project: Project, keyId?: string) {
  const token = `in_${randomBytes(24).toString('base64url')}`;
  const now = Date.now();
  await kernel.storage.webhooks.setInbound(project.pk, hashApiKey(token), now, keyId);
  return { url: inboundUrl(kernel, token), created_at: new Date(now).toISOString() };
}

/** The rows an inbound body carries: one company map (bare, or as `{"company": {…}}`) or an array of them. */
function companiesOf(body: unknown): Record<string, unknown>[] {
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const shape = 'Send a JSON object mapping column names to values, {"company": {…}}, or an array of such objects';
  if (Array.isArray(body)) {
    if (body.length === 0) throw validationError(`The array is empty. ${shape}.`, [{ path: '', message: 'no rows' }]);
    if (body.length > MAX_BATCH_ROWS)
      throw validationError(`At most ${MAX_BATCH_ROWS} rows per request; send the rest in further requests.`, [
        { path: '', message: `${body.length} rows` },
      ]);
    const bad = body.findIndex((item) => !isMap(item));
    if (bad >= 0) throw validationError(`[${bad}] is not an object. ${shape}.`, [{ path: `[${bad}]`, message: 'not an object' }]);
    return body as Record<string, unknown>[];
  }
  if (!isMap(body)) throw validationError(`${shape}.`, [{ path: '', message: 'not an object or array' }]);
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] === 'company' && isMap(body.company)) return [body.company];
  return [body];
}

/**
 * The project of an inbound URL, admitted as a caller of its workspace's plan (rate per URL): a
 * 404 or 429 before the body is read, so that an unknown or flooding sender costs no parsing.
 */
export async function inboundTarget(kernel: Kernel, token: string) {
  const unknownUrl = new ServiceError(
    'not_found',
    'No inbound URL here: it was replaced or turned off (POST /projects/{id}/inbound makes a new one)',
  );
  const found = /^in_[\w-]{20,64}$/.test(token) ? await kernel.storage.webhooks.inboundProject(hashApiKey(token)) : undefined;
  const project = found === undefined ? undefined : await kernel.storage.projects.getByPk(found.projectPk);
  const workspace = project && (await kernel.storage.workspaces.get(project.workspaceId));
  if (!project || !workspace) throw unknownUrl;
  // It lives as long as what made it: the key (revoked, or its person left) and the plan's API access.
  if (found?.keyId && !(await kernel.storage.workspaces.keyIsLive(workspace.id, found.keyId))) {
    throw new ServiceError('not_found', 'This inbound URL stopped working: the API key that made it was revoked (make a new one)');
  }
  requireApiAccess(workspace);
  const headers = await admitCall(kernel, workspace, `inbound:${project.id}`);
  return { project, workspace, headers };
}

/**
 * POST {BASE_PATH}/inbound/{token}: adds the rows of the body to the URL's project, as add_rows does
 * (unique keys apply; auto-run columns start), with no API key. Input columns left out are empty;
 * a name that is no input column is a 422 and nothing is written.
 */
export async function receiveInbound(kernel: Kernel, target: Awaited<ReturnType<typeof inboundTarget>>, body: unknown) {
  const { project, workspace, headers } = target;
  const companies = companiesOf(body);
  const columns = await kernel.storage.projects.columns(project);
  const empty = Object.fromEntries(columns.filter((c) => c.type === 'input').map((c) => [c.name, null]));
  const cells = cellsOfEach(
    columns,
    companies.map((company) => ({ ...empty, ...company })),
    (i) => (companies.length > 1 ? `[${i}]: ` : ''),
    422,
  );
  await checkRowQuota(kernel, workspace, project.pk, cells.length);
  const out = await insertRows(kernel, project, columns, cells, {});
  const created = out.created.filter(Boolean).length;
  return {
    headers,
    body: {
      project_id: project.id,
      row_ids: out.seqs.map(String),
      created,
      existing: cells.length - created,
    },
  };
}
