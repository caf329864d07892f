import { errors, jwtVerify, SignJWT } from 'jose';
import { ServiceError } from '../errors.ts';
import { SIGNING_ALG } from '../identity/oauth/signing-keys.ts';
import type { Kernel } from '../kernel.ts';
import type { Project } from '../model.ts';
import type { ExportQuery } from './export.ts';

/** How long a download link works. */
export const LINK_SECONDS = 15 * 60;
const TYP = 'export+jwt';
const AUDIENCE = 'project-export';

/** What a link downloads: one project's export, as asked when it was made. */
export interface ExportGrant {
  workspaceId: string;
  projectId: string;
  /** The API key that made the link, when one did. */
  keyId?: string;
  query: ExportQuery & { bom?: boolean; escape_formulas?: boolean; values?: 'primary' | 'json' };
}

/**
 * A signed link to a project's CSV export, valid LINK_SECONDS (MCP `export_project`, docs/enrichment.md):
 * the link is the credential, so an agent can hand it to a person or a program that holds no key.
 * Signed with the service's stored ES256 keys (those of its access tokens; every process verifies
 * them), it names the project, its workspace and the export's query, and nothing else.
 */
export async function exportLink(
  kernel: Kernel,
  project: Project,
  query: ExportGrant['query'],
  keyId?: string,
): Promise<{ url: string; expires_at: string }> {
  const { kid, alg, key } = await kernel.oauth.keys.current();
  // `key`: the API key that asked for it; the link dies with that key.
  const token = await new SignJWT({ wid: project.workspaceId, pid: project.id, q: query, ...(keyId ? { key: keyId } : {}) })
    .setProtectedHeader({ alg, kid, typ: TYP })
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${LINK_SECONDS}s`)
    .sign(key);
  const base = `${kernel.oauth.issuer.replace(/\/+$/, '')}${kernel.config.basePath}`;
  return {
    url: `${base}/projects/${encodeURIComponent(project.id)}/export.csv?token=${token}`,
    expires_at: new Date(Date.now() + LINK_SECONDS * 1000).toISOString(),
  };
}

/** The export a link grants; 401 when it is forged, expired, or for another project. */
export async function verifyExportLink(kernel: Kernel, token: string, projectId: string): Promise<ExportGrant> {
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = await kernel.oauth.keys.verifying(header.kid);
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key;
      },
      { audience: AUDIENCE, typ: TYP, requiredClaims: ['exp', 'wid', 'pid'], algorithms: [SIGNING_ALG] },
    );
    if (payload.pid !== projectId) throw new ServiceError('unauthorized', 'This download link is for another project');
    return {
      workspaceId: String(payload.wid),
      projectId,
      query: (payload.q ?? {}) as ExportGrant['query'],
      ...(typeof payload.key === 'string' ? { keyId: payload.key } : {}),
    };
  } catch (e) {
    if (e instanceof errors.JOSEError) {
      const expired = e instanceof errors.JWTExpired;
      throw new ServiceError('unauthorized', {
        message: expired
          ? 'This download link has expired (links last 15 minutes): ask for a new one (export_project)'
          : 'Invalid download link',
        reason: e.code,
      });
    }
    throw e;
  }
}
