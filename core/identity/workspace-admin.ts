import { ServiceError, validationError } from '../errors.ts';
import type { Role } from '../model.ts';
import type { FoundSession, Storage } from '../ports/storage.ts';
import { checkPassword, checkRole, hashPassword, normalizeEmail } from './accounts.ts';
import { generateApiKey, hashApiKey, isKeyPrefix } from './api-keys.ts';

/**
 * What owners and admins do in the console (docs/console.md): the workspace's API keys
 * (Settings → Integrations → API) and its members. Every function takes the signed-in session and
 * refuses a `member`; everything is scoped to the session's workspace (another workspace's key or
 * member is "not found").
 */

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function requireManager(found: FoundSession): void {
  if (found.role === 'member') {
    throw new ServiceError('forbidden', 'Only owners and admins of this workspace manage its keys and members; ask one of them');
  }
}

function checkPrefix(prefix: string): string {
  if (!isKeyPrefix(prefix))
    throw validationError('A key is named by its prefix, like wfs_1a2b3c4d', [{ path: 'prefix', message: 'a key prefix' }]);
  return prefix;
}

export async function listKeys(storage: Storage, found: FoundSession) {
  requireManager(found);
  const keys = await storage.workspaces.listKeys(found.workspace.id);
  return {
    keys: await Promise.all(
      keys.map(async (k) => ({
        prefix: k.prefix,
        created_at: iso(k.createdAt),
        created_by: k.createdBy,
        last_used_at: iso(k.lastUsedAt),
        revoked_at: iso(k.revokedAt),
        monthly_credits: k.monthlyCredits,
        spent_this_month: k.monthlyCredits === null ? null : ((await storage.credits.keyMonth(k.id))?.spent ?? 0),
      })),
    ),
  };
}

/** A monthly credit cap as given: a whole number above 0, or null (or absent, or "") for none. */
export function checkMonthlyCredits(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n === 'number' && Number.isSafeInteger(n) && n > 0) return n;
  throw validationError('monthly_credits is a whole number of credits above 0, or null for no cap', [
    { path: 'monthly_credits', message: 'must be a whole number above 0, or null' },
  ]);
}

/** A new key, with an optional monthly credit cap: the whole key is in this answer only. */
export async function createKey(storage: Storage, found: FoundSession, body: { monthly_credits?: unknown } = {}) {
  requireManager(found);
  const monthlyCredits = checkMonthlyCredits(body.monthly_credits);
  const { key, prefix } = generateApiKey();
  await storage.workspaces.addKey({
    workspaceId: found.workspace.id,
    prefix,
    keyHash: hashApiKey(key),
    createdBy: found.user.id,
    monthlyCredits,
  });
  return { api_key: key, prefix, monthly_credits: monthlyCredits };
}

/** Sets or removes a live key's monthly credit cap. */
export async function setKeyCap(storage: Storage, found: FoundSession, rawPrefix: string, body: { monthly_credits?: unknown }) {
  requireManager(found);
  const prefix = checkPrefix(rawPrefix);
  const monthlyCredits = checkMonthlyCredits(body.monthly_credits);
  if (!(await storage.workspaces.setKeyCap(prefix, monthlyCredits, found.workspace.id))) {
    throw new ServiceError('not_found', `No live key ${prefix} in this workspace`);
  }
  return { prefix, monthly_credits: monthlyCredits };
}

/** A new key in place of a live one, which stops working at once. */
export async function rotateKey(storage: Storage, found: FoundSession, rawPrefix: string) {
  requireManager(found);
  const prefix = checkPrefix(rawPrefix);
  const next = generateApiKey();
  const done = await storage.workspaces.rotateKey(found.workspace.id, prefix, {
    prefix: next.prefix,
    keyHash: hashApiKey(next.key),
    createdBy: found.user.id,
  });
  if (!done) throw new ServiceError('not_found', `No live key ${prefix} in this workspace`);
  return { api_key: next.key, prefix: next.prefix, replaces: prefix };
}

export async function revokeKey(storage: Storage, found: FoundSession, rawPrefix: string): Promise<void> {
  requireManager(found);
  const prefix = checkPrefix(rawPrefix);
  if (!(await storage.workspaces.revokeKeyOf(found.workspace.id, prefix))) {
    throw new ServiceError('not_found', `No live key ${prefix} in this workspace`);
  }
}

export async function listMembers(storage: Storage, found: FoundSession) {
  const members = await storage.users.members(found.workspace.id);
  // Invitations not yet accepted, for those who may add people.
  const invited = found.role === 'member' ? [] : await storage.users.invitationsOf(found.workspace.id);
  return {
    members: members.map((m) => ({ user_id: m.user.id, email: m.user.email, role: m.role, since: iso(m.since) })),
    invitations: invited.map((i) => ({ id: i.id, email: i.email, role: i.role, invited_at: iso(i.createdAt) })),
  };
}

/** Whether `found` may give or take `role` (only owners make or unmake owners). */
function mayHandle(found: FoundSession, role: Role): void {
  requireManager(found);
  if (role === 'owner' && found.role !== 'owner') throw new ServiceError('forbidden', 'Only owners make, change or remove owners');
}

/**
 * Invites a person by email with a role: they join when they accept, signed in as themselves — no
 * one is put in a workspace without saying yes. The answer is the same whether the email has an
 * account or not (it tells nothing about other people's accounts). A `password` creates the account
 * of an email that has none, so that a new person can sign in and accept; an existing account's
 * password is never touched.
 */
export async function addMember(storage: Storage, found: FoundSession, body: { email?: unknown; role?: unknown; password?: unknown }) {
  const email = normalizeEmail(body.email);
  const role = checkRole(body.role ?? 'member');
  mayHandle(found, role);
  const passwordHash = body.password === undefined ? undefined : await hashPassword(checkPassword(body.password));
  const members = await storage.users.members(found.workspace.id);
  const already = members.find((m) => m.user.email === email);
  if (already) throw new ServiceError('conflict', `${email} is already a member (${already.role}); change the role instead`);
  if (passwordHash && !(await storage.users.findByEmail(email))) {
    await storage.users.create({ email, passwordHash }); // undefined when made meanwhile: the invitation stands either way
  }
  const id = await storage.users.invite(found.workspace.id, email, role, found.user.id);
  return { invitation_id: id, email, role, status: 'invited' as const };
}

/** The invitations waiting for the signed-in person, in every workspace. */
export async function myInvitations(storage: Storage, found: FoundSession) {
  const invitations = await storage.users.invitationsFor(found.user.email);
  return {
    invitations: invitations.map((i) => ({
      id: i.id,
      workspace: { id: i.workspace.id, name: i.workspace.name },
      role: i.role,
      invited_at: iso(i.createdAt),
    })),
  };
}

/** Accepts an invitation to the signed-in person: they join its workspace with its role. */
export async function acceptInvitation(storage: Storage, found: FoundSession, id: string) {
  const invitation = await storage.users.takeInvitation(id, found.user.email);
  if (!invitation) throw new ServiceError('not_found', 'No such invitation for you (withdrawn, or answered already)');
  if (!(await storage.workspaces.get(invitation.workspaceId)))
    throw new ServiceError('not_found', 'The workspace of this invitation is gone');
  const current = (await storage.users.members(invitation.workspaceId)).find((m) => m.user.id === found.user.id);
  if (!current) await storage.users.setRole(invitation.workspaceId, found.user.id, invitation.role);
  return { workspace_id: invitation.workspaceId, role: current?.role ?? invitation.role };
}

/** Declines an invitation to the signed-in person, or withdraws one of this workspace (owners and admins). */
export async function dropInvitation(storage: Storage, found: FoundSession, id: string): Promise<void> {
  if (await storage.users.takeInvitation(id, found.user.email)) return;
  requireManager(found);
  if (!(await storage.users.withdrawInvitation(found.workspace.id, id))) {
    throw new ServiceError('not_found', 'No such invitation (withdrawn, or answered already)');
  }
}

async function memberOrFail(storage: Storage, found: FoundSession, userId: string) {
  const member = (await storage.users.members(found.workspace.id)).find((m) => m.user.id === userId);
  if (!member) throw new ServiceError('not_found', `No member ${userId} in this workspace`);
  return member;
}

/** An owner cannot leave the workspace without one. */
async function keepAnOwner(storage: Storage, found: FoundSession, userId: string): Promise<void> {
  const owners = (await storage.users.members(found.workspace.id)).filter((m) => m.role === 'owner');
  if (owners.length === 1 && owners[0]?.user.id === userId) {
    throw new ServiceError('conflict', 'This is the workspace’s only owner: make someone else owner first');
  }
}

export async function setMemberRole(storage: Storage, found: FoundSession, userId: string, body: { role?: unknown }) {
  const role = checkRole(body.role);
  const member = await memberOrFail(storage, found, userId);
  mayHandle(found, member.role);
  mayHandle(found, role);
  if (member.role === 'owner' && role !== 'owner') await keepAnOwner(storage, found, userId);
  await storage.users.setRole(found.workspace.id, userId, role);
  return { user_id: userId, email: member.user.email, role };
}

export async function removeMember(storage: Storage, found: FoundSession, userId: string): Promise<void> {
  const member = await memberOrFail(storage, found, userId);
  mayHandle(found, member.role);
  if (member.role === 'owner') await keepAnOwner(storage, found, userId);
  await storage.users.removeMember(found.workspace.id, userId);
  // What the person could do with the workspace leaves with them: the API keys they made stop working.
  await storage.workspaces.revokeKeysMadeBy(found.workspace.id, userId);
}

/** The ledger's latest entries, newest first (Settings → Credits): owners and admins. */
export async function ledger(storage: Storage, found: FoundSession, limit = 100) {
  requireManager(found);
  const entries = await storage.credits.entries(found.workspace.id, limit);
  return {
    balance: await storage.credits.balance(found.workspace.id),
    entries: entries.map((e) => ({
      id: e.id,
      kind: e.kind,
      amount: e.amount,
      plugin_id: e.pluginId ?? null,
      project_id: e.projectId ?? null,
      note: e.note ?? null,
      created_at: iso(e.createdAt),
    })),
  };
}
