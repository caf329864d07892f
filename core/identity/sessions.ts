import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import type { RateRule } from '../ports/rate-limiter.ts';
import type { Kernel } from '../kernel.ts';
import type { FoundSession } from '../ports/storage.ts';
import { normalizeEmail } from './accounts.ts';

/**
 * Console sign-in (docs/console.md): server-side sessions behind an HttpOnly, SameSite=Lax
 * cookie holding 256 random bits (only their SHA-256 is stored), 14 days sliding, and a CSRF token
 * per session that every state-changing request made with the session must echo.
 */

export const SESSION_COOKIE = 'wfs_session';
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_MS = 14 * 24 * 3600_000;
/** A session is pushed back to 14 days at most once a day: a write per request would be wasteful. */
const EXTEND_AFTER_MS = 24 * 3600_000;

/** Failed sign-in attempts: per email and per client address, a burst then one every 30 s (6 s). */
const ATTEMPTS_PER_EMAIL = { burst: 5, perSecond: 1 / 30 };
const ATTEMPTS_PER_ADDRESS = { burst: 20, perSecond: 1 / 6 };

const WRONG_CREDENTIALS = 'Wrong email or password';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Compared in constant time, so that an unknown email costs what a wrong password does. */
let dummyHash: Promise<string> | undefined;

/** The buckets an attempt for this email from this address draws on. */
const buckets = (email: string, address: string) =>
  [
    [`signin:email:${sha256(email).slice(0, 32)}`, ATTEMPTS_PER_EMAIL],
    [`signin:ip:${address}`, ATTEMPTS_PER_ADDRESS],
  ] as const;

/**
 * Every attempt takes a token of its email's bucket and of its address's before the password is
 * checked (one atomic take each; shared by every process through Redis), so concurrent guesses are
 * counted as they arrive: the sixth of forty at once is refused, whatever comes after. A bucket with
 * none left refuses the attempt (429) and what was taken for it goes back.
 */
async function takeAttempt(kernel: Kernel, email: string, address: string): Promise<void> {
  const taken: (readonly [string, RateRule])[] = [];
  for (const bucket of buckets(email, address)) {
    const { waitMs } = await kernel.rateLimiter.take(bucket[0], bucket[1], 1);
    if (waitMs > 0) {
      await Promise.all(taken.map(([key, rule]) => kernel.rateLimiter.take(key, rule, -1)));
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new ServiceError('rate_limited', `Too many sign-in attempts; try again in ${seconds} s`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
    taken.push(bucket);
  }
}

/** A right password gives its attempt back: only failures use up the budget. */
async function returnAttempt(kernel: Kernel, email: string, address: string): Promise<void> {
  await Promise.all(buckets(email, address).map(([key, rule]) => kernel.rateLimiter.take(key, rule, -1)));
}

export interface SignedIn {
  /** The cookie's value: shown to the browser once, never stored. */
  token: string;
  found: FoundSession;
}

/**
 * Checks an email and password and opens a session in the user's first workspace. The same
 * message for an unknown email and a wrong password; failed attempts are limited per email and address.
 */
export async function signIn(kernel: Kernel, input: { email: unknown; password: unknown; address: string }): Promise<SignedIn> {
  const email = normalizeEmail(input.email);
  await takeAttempt(kernel, email, input.address);
  const password = typeof input.password === 'string' ? input.password : '';
  const user = await kernel.storage.users.findByEmail(email);
  dummyHash ??= Bun.password.hash('not the password of anyone', { algorithm: 'argon2id' });
  // Oversized passwords are not hashed (a denial of service); they match no stored password anyway.
  const candidate = password.length > 0 && password.length <= 1024 ? password : '';
  const ok = await Bun.password.verify(candidate || ' ', user?.passwordHash ?? (await dummyHash));
  if (!user || !ok || !candidate) throw new ServiceError('unauthorized', WRONG_CREDENTIALS);
  await returnAttempt(kernel, email, input.address);
  let [first] = await kernel.storage.users.workspacesOf(user.id);
  if (!first) {
    // Someone in no workspace yet (a new account, made for an invitation) joins the workspace that
    // invited them by signing in; people already in one accept from Settings → Members.
    const [invitation] = await kernel.storage.users.invitationsFor(user.email);
    if (invitation && (await kernel.storage.users.takeInvitation(invitation.id, user.email))) {
      await kernel.storage.users.setRole(invitation.workspaceId, user.id, invitation.role);
      [first] = await kernel.storage.users.workspacesOf(user.id);
    }
  }
  if (!first) throw new ServiceError('forbidden', 'Your account belongs to no workspace yet: ask an owner of one to invite you');
  const token = randomBytes(32).toString('base64url');
  const now = Date.now();
  const session = {
    tokenHash: sha256(token),
    userId: user.id,
    workspaceId: first.workspace.id,
    csrfToken: randomBytes(24).toString('base64url'),
    createdAt: now,
    expiresAt: now + SESSION_MS,
  };
  await kernel.storage.sessions.create(session);
  return {
    token,
    found: { session, user: { id: user.id, email: user.email, createdAt: user.createdAt }, workspace: first.workspace, role: first.role },
  };
}

/** The session a cookie holds, if live (and pushed back to 14 days once a day). */
export async function sessionOf(kernel: Kernel, cookieHeader: string | null): Promise<FoundSession | undefined> {
  const token = cookieValue(cookieHeader, SESSION_COOKIE);
  if (!token || token.length > 100) return undefined;
  const now = Date.now();
  const found = await kernel.storage.sessions.find(sha256(token), now);
  if (found && found.session.expiresAt - now < SESSION_MS - EXTEND_AFTER_MS) {
    found.session.expiresAt = now + SESSION_MS;
    await kernel.storage.sessions.extend(found.session.tokenHash, found.session.expiresAt);
  }
  return found;
}

export async function signOut(kernel: Kernel, found: FoundSession): Promise<void> {
  await kernel.storage.sessions.remove(found.session.tokenHash);
}

/** Whether a request made with this session carries its CSRF token. */
export function csrfMatches(found: FoundSession, presented: string | null | undefined): boolean {
  if (!presented) return false;
  const [a, b] = [Buffer.from(presented), Buffer.from(found.session.csrfToken)];
  return a.length === b.length && timingSafeEqual(a, b);
}

export const csrfRefusal = () =>
  new ServiceError(
    'forbidden',
    `This request was made with a console session but without its CSRF token (the ${CSRF_HEADER} header); reload the page`,
  );

/** Set-Cookie for a new session, or (token null) one that clears it. */
export function sessionCookie(token: string | null, secure: boolean): string {
  const parts = [`${SESSION_COOKIE}=${token ?? ''}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${token ? SESSION_MS / 1000 : 0}`];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

export function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
