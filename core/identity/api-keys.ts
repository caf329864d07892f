import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import type { Project, Workspace } from '../model.ts';
import { log } from '../log.ts';
import { planRules } from '../plans.ts';
import type { WorkspaceRepo } from '../ports/storage.ts';

/**
 * API keys look like `wfs_<8 hex>_<43 base64url>`. The part before the second `_` is the public
 * prefix (shown in lists, used to revoke); only the SHA-256 of the whole key is stored. Keys carry
 * 256 random bits, so a fast hash is safe here (no password stretching needed).
 */
export function generateApiKey(): { key: string; prefix: string } {
  const prefix = `wfs_${randomBytes(4).toString('hex')}`;
  return { key: `${prefix}_${randomBytes(32).toString('base64url')}`, prefix };
}

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The prefix of a full key, or the argument itself when it already is one. */
export function keyPrefix(keyOrPrefix: string): string {
  const m = /^(wfs_[0-9a-f]{8})(_|$)/.exec(keyOrPrefix);
  return m?.[1] ?? keyOrPrefix;
}

/** Whether this is a key's public prefix alone (`wfs_xxxxxxxx`, or `boot_xxxxxxxx` of a bootstrap key). */
export const isKeyPrefix = (s: string): boolean => /^(wfs|boot)_[0-9a-f]{8}$/.test(s);

/**
 * The public prefix of a key someone presented, for logs: only when it has the `wfs_` shape (whose
 * prefix is public by design); any other string may be a secret as a whole, so it gives nothing.
 */
export function presentedKeyPrefix(key: string | null | undefined): string | null {
  const m = key ? /^(wfs_[0-9a-f]{8})_/.exec(key.trim()) : null;
  return m?.[1] ?? null;
}

/** Issues a key for a workspace; the clear key is returned once and never stored. */
export async function issueApiKey(
  repo: WorkspaceRepo,
  workspaceId: string,
  key?: string,
  createdBy?: string,
  monthlyCredits?: number | null,
): Promise<{ api_key: string; prefix: string }> {
  // A key chosen by the operator (BOOTSTRAP_API_KEY) may have any shape; give it a stable prefix.
  const generated = key
    ? { key, prefix: /^wfs_[0-9a-f]{8}_/.test(key) ? keyPrefix(key) : `boot_${hashApiKey(key).slice(0, 8)}` }
    : generateApiKey();
  await repo.addKey({ workspaceId, prefix: generated.prefix, keyHash: hashApiKey(generated.key), createdBy, monthlyCredits });
  return { api_key: generated.key, prefix: generated.prefix };
}

/** Filled by authentication once the key is known (also when its plan then refuses it), for the access log. */
export interface KeyHolder {
  keyPrefix: string | null;
  workspaceId: string | null;
}

/** A key's `last_used_at` is written at most once a minute per process: it is a write on the read path. */
const TOUCH_EVERY_MS = 60_000;
const touched = new Map<string, number>();

function noteKeyUse(repo: WorkspaceRepo, keyId: string): void {
  const now = Date.now();
  if (now - (touched.get(keyId) ?? 0) < TOUCH_EVERY_MS) return;
  touched.set(keyId, now);
  if (touched.size > 10_000) touched.delete(touched.keys().next().value as string);
  repo.touchKey(keyId, now).catch((e) => log.warn('could not record a key’s last use', { error: (e as Error).message }));
}

/** 403 when the workspace's plan has no API access: keys, download links and inbound URLs all stop with it. */
export function requireApiAccess(workspace: Workspace): void {
  if (!planRules(workspace.plan).apiAccess) {
    throw new ServiceError(
      'forbidden',
      `The workspace's plan "${workspace.plan}" has no API access; upgrade it (bun run admin plan:set --workspace ${workspace.id} --plan pro)`,
    );
  }
}

/** Whose request budget a key's calls spend: the same through REST and MCP. */
export const rateKeyOf = (keyHash: string): string => `key:${keyHash.slice(0, 16)}`;

/**
 * Resolves the `service-api-key` header to its workspace: 401 when missing or unknown (or revoked),
 * 403 when the workspace's plan has no API access. For a project route, the caller's project of
 * that id comes in the same read (`project: null` when the workspace has no such live project).
 */
export async function authenticateFor(
  repo: WorkspaceRepo,
  header: string | null | undefined,
  projectId?: string,
  who?: KeyHolder,
): Promise<{ workspace: Workspace; rateKey: string; keyId: string; project?: Project | null }> {
  const key = header?.trim();
  if (!key) {
    throw new ServiceError('unauthorized', 'Missing API key: send it in the service-api-key header');
  }
  const hash = hashApiKey(key);
  const found = await repo.findKey(hash, projectId);
  if (!found || found.key.revokedAt !== null || !timingSafeEqual(Buffer.from(found.key.keyHash), Buffer.from(hash))) {
    throw new ServiceError('unauthorized', 'Unknown or revoked API key: check the service-api-key header or create a new key');
  }
  noteKeyUse(repo, found.key.id);
  if (who) {
    who.keyPrefix = found.key.prefix;
    who.workspaceId = found.workspace.id;
  }
  requireApiAccess(found.workspace);
  return { workspace: found.workspace, rateKey: rateKeyOf(hash), keyId: found.key.id, project: found.project };
}
