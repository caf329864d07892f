import { ServiceError, validationError } from '../errors.ts';
import type { Kernel } from '../kernel.ts';
import { log } from '../log.ts';
import { ROLES, type Role, type User, type Workspace } from '../model.ts';
import type { Storage } from '../ports/storage.ts';

/**
 * People (docs/console.md): users with argon2id passwords (Bun.password) and a role in each
 * workspace they belong to. Used by the admin CLI, the bootstrap admin and sign-in.
 */

export const MIN_PASSWORD_CHARS = 8;
/** Longer passwords are refused: hashing megabytes on every sign-in attempt is a denial of service. */
export const MAX_PASSWORD_CHARS = 1024;
const MAX_EMAIL_CHARS = 254;

/** The email as stored and compared: trimmed, lower-cased; a clear error when it is not one. */
export function normalizeEmail(raw: unknown, field = 'email'): string {
  const email = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > MAX_EMAIL_CHARS) {
    throw validationError('Enter an email address such as name@example.com', [
      { path: field, message: `an email address of at most ${MAX_EMAIL_CHARS} characters` },
    ]);
  }
  return email;
}

export function checkPassword(raw: unknown, field = 'password'): string {
  const password = typeof raw === 'string' ? raw : '';
  if (password.length < MIN_PASSWORD_CHARS || password.length > MAX_PASSWORD_CHARS) {
    throw validationError(`A password has ${MIN_PASSWORD_CHARS} to ${MAX_PASSWORD_CHARS} characters`, [
      { path: field, message: `${MIN_PASSWORD_CHARS} to ${MAX_PASSWORD_CHARS} characters` },
    ]);
  }
  return password;
}

export function checkRole(raw: unknown): Role {
  if (!ROLES.includes(raw as Role)) {
    throw validationError(`A role is one of ${ROLES.join(', ')}`, [{ path: 'role', message: `one of ${ROLES.join(', ')}` }]);
  }
  return raw as Role;
}

export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, { algorithm: 'argon2id' });

/**
 * Creates a user. With `workspaceId` the user joins that workspace (role `member` unless told);
 * without, the user gets a workspace of their own, named after them, as its `owner`.
 */
export async function createUser(
  storage: Storage,
  input: { email: unknown; password: unknown; workspaceId?: string; role?: unknown; newWorkspace?: { plan: string } },
): Promise<{ user: User; workspace: Workspace; role: Role }> {
  const email = normalizeEmail(input.email);
  const password = checkPassword(input.password);
  let workspace: Workspace | undefined;
  if (input.workspaceId !== undefined) {
    workspace = await storage.workspaces.get(input.workspaceId);
    if (!workspace) throw new ServiceError('not_found', `No workspace "${input.workspaceId}" (bun run admin workspace:create)`);
  }
  const role = input.role === undefined ? (workspace ? 'member' : 'owner') : checkRole(input.role);
  const user = await storage.users.create({ email, passwordHash: await hashPassword(password) });
  if (!user) {
    throw new ServiceError('conflict', `A user with the email ${email} exists; to set a new password: bun run admin user:password`);
  }
  workspace ??= await storage.workspaces.create({ name: email, plan: input.newWorkspace?.plan ?? 'free' });
  await storage.users.setRole(workspace.id, user.id, role);
  return { user, workspace, role };
}

/** Sets a user's password and ends every session of theirs. */
export async function setPassword(storage: Storage, rawEmail: unknown, rawPassword: unknown): Promise<User> {
  const email = normalizeEmail(rawEmail);
  const password = checkPassword(rawPassword);
  const user = await storage.users.findByEmail(email);
  if (!user) throw new ServiceError('not_found', `No user with the email ${email} (bun run admin user:create)`);
  await storage.users.setPasswordHash(user.id, await hashPassword(password));
  await storage.sessions.removeForUser(user.id);
  return { id: user.id, email: user.email, createdAt: user.createdAt };
}

/**
 * BOOTSTRAP_ADMIN_EMAIL + BOOTSTRAP_ADMIN_PASSWORD: creates that user once, as owner of the
 * `default` workspace (the one BOOTSTRAP_API_KEY makes, or a new one on `pro`). An existing user
 * is left as is: changing the variable later does not reset a password (admin user:password does).
 */
export async function bootstrapAdmin(kernel: Kernel): Promise<void> {
  const { bootstrapAdmin: admin, bootstrapCredits } = kernel.config;
  if (!admin) return;
  const { storage } = kernel;
  const email = normalizeEmail(admin.email, 'BOOTSTRAP_ADMIN_EMAIL');
  const existing = await storage.users.findByEmail(email);
  if (existing) {
    log.info('bootstrap admin ready', { user_id: existing.id });
    return;
  }
  let workspace = await storage.workspaces.findByName('default');
  if (!workspace) {
    workspace = await storage.workspaces.create({ name: 'default', plan: 'pro' });
    if (bootstrapCredits > 0) await storage.credits.grant(workspace.id, bootstrapCredits, { note: 'bootstrap' });
  }
  const user = await storage.users.create({
    email,
    passwordHash: await hashPassword(checkPassword(admin.password, 'BOOTSTRAP_ADMIN_PASSWORD')),
  });
  // Another process created it meanwhile: it is theirs to finish.
  if (!user) return;
  await storage.users.setRole(workspace.id, user.id, 'owner');
  log.info('bootstrap admin created', { user_id: user.id, workspace_id: workspace.id });
}
