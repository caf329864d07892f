import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { safeNext } from '../doors/http/signin/signin-routes.ts';
import { admin } from './support/admin-cli.ts';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * People (docs/console.md): accounts from the admin CLI and BOOTSTRAP_ADMIN_*, sign-in at /login with a
 * server-side session cookie, the REST operations with that session (CSRF on every write), sign-out,
 * and every refusal a person or a forged request meets — over real HTTP, as a browser sends it.
 */

const ADMIN = { email: 'Owner@Example.com', password: 'correct horse battery' };

describe.each(DIALECTS)('accounts and console sessions on %s', (dialect) => {
  let t: TestService;
  let origin: string;
  let databaseUrl: string;

  beforeAll(async () => {
    t = await startTestService(dialect, { BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password });
    origin = new URL(t.url).origin;
    databaseUrl = t.service.kernel.config.databaseUrl;
  });
  afterAll(() => t.stop());

  /** POST /login as the browser's form does; answers the status, Location and the session cookie. */
  async function formLogin(email: string, password: string, extra: Record<string, string> = {}) {
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...extra },
      body: new URLSearchParams({ email, password, next: '/projects/abc' }),
    });
    const setCookie = res.headers.get('set-cookie') ?? '';
    return {
      status: res.status,
      location: res.headers.get('location'),
      setCookie,
      cookie: setCookie.split(';')[0] ?? '',
      page: await res.text(),
    };
  }

  async function signedIn(email = ADMIN.email, password = ADMIN.password) {
    const login = await formLogin(email, password);
    expect(login.status).toBe(303);
    const session = await fetch(`${origin}/session`, { headers: { cookie: login.cookie } });
    expect(session.status).toBe(200);
    const body = (await session.json()) as any;
    const call = (method: string, path: string, init: { body?: unknown; csrf?: string | null } = {}) =>
      fetch(`${t.url}${path}`, {
        method,
        headers: {
          cookie: login.cookie,
          accept: 'application/json',
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.csrf === null ? {} : { 'x-csrf-token': init.csrf ?? body.csrf_token }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    return { cookie: login.cookie, session: body, call };
  }

  test('GET /login is a form with email and password inputs and a "Sign in" button', async () => {
    const res = await fetch(`${origin}/login?next=/projects`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const page = await res.text();
    expect(page).toMatch(/<input[^>]+name="email"/);
    expect(page).toMatch(/<input[^>]+name="password"[^>]+type="password"|<input[^>]+type="password"[^>]+name="password"/);
    expect(page).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(page).toContain('<label for="email">');
    expect(page).toContain('value="/projects"');
  });

  test('BOOTSTRAP_ADMIN_* made an owner of the default workspace; signing in sets an HttpOnly SameSite=Lax cookie and goes where asked', async () => {
    const login = await formLogin(ADMIN.email.toUpperCase(), ADMIN.password);
    expect(login.status).toBe(303);
    expect(login.location).toBe('/projects/abc');
    expect(login.setCookie).toMatch(/^wfs_session=[\w-]{43};/);
    expect(login.setCookie).toContain('HttpOnly');
    expect(login.setCookie).toContain('SameSite=Lax');
    expect(login.setCookie).not.toContain('Secure'); // PUBLIC_URL is not https here
    const session = (await (await fetch(`${origin}/session`, { headers: { cookie: login.cookie } })).json()) as any;
    expect(session).toMatchObject({ user: { email: 'owner@example.com' }, workspace: { name: 'default', plan: 'pro' }, role: 'owner' });
    expect(session.csrf_token).toMatch(/^[\w-]{32}$/);
    // The console's shell for a signed-in person; the sign-in page for anyone else.
    const home = await fetch(`${origin}/`, { headers: { cookie: login.cookie } });
    expect(home.status).toBe(200);
    // Neither the console nor the sign-in page may be framed by another site (clickjacking).
    const signIn = await fetch(`${origin}/login`);
    for (const page of [home, signIn]) {
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    expect(await home.text()).toMatch(/<script type="module" src="\/console\/assets\/main-[\w-]+\.js">/);
    const anonymous = await fetch(`${origin}/projects/abc`, { redirect: 'manual' });
    expect([anonymous.status, anonymous.headers.get('location')]).toEqual([303, '/login?next=%2Fprojects%2Fabc']);
    // The token is stored only as its hash.
    const stored = await t.service.kernel.storage.sessions.find(login.cookie.split('=')[1] as string, Date.now());
    expect(stored).toBeUndefined();
  });

  test('after sign-in `next` goes only to a path of this site: control characters, //, \\ and schemes go home', async () => {
    for (const hostile of [
      '/\t/evil.test/phish',
      '/\n/evil.test',
      '/\r\n/evil.test',
      '//evil.test',
      '/\\evil.test',
      '\\/evil.test',
      'https://evil.test/',
      'javascript:alert(1)',
      '/%09/evil.test'.replace('%09', '\u0000'),
      ' /evil',
    ]) {
      expect(safeNext(hostile)).toBe('/');
    }
    expect(safeNext('/projects/abc?x=1#row-2')).toBe('/projects/abc?x=1#row-2');
    expect(safeNext('/projects/%2F%2Fevil')).toBe('/projects/%2F%2Fevil'); // encoded, it stays a path here
    // Over HTTP, as the review sent it: /login?next=%2F%09%2Fevil.test%2Fphish.
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: `email=${encodeURIComponent(ADMIN.email)}&password=${encodeURIComponent(ADMIN.password)}&next=%2F%09%2Fevil.test%2Fphish`,
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const page = await (await fetch(`${origin}/login?next=%2F%09%2Fevil.test%2Fphish`)).text();
    expect(page).not.toContain('evil.test');
  });

  test('an unknown email and a wrong password get the same answer, and nothing is signed in', async () => {
    const unknown = await formLogin('nobody@example.com', ADMIN.password);
    const wrong = await formLogin(ADMIN.email, 'not the password');
    for (const r of [unknown, wrong]) {
      expect(r.status).toBe(401);
      expect(r.setCookie).toBe('');
      expect(r.page).toContain('Wrong email or password');
      expect(r.page).toContain('role="alert"');
    }
    const json = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN.email, password: 'nope-nope' }),
    });
    expect(json.status).toBe(401);
    expect(((await json.json()) as any).detail).toBe('Wrong email or password');
  });

  test('sign-in attempts are limited per email: the sixth quick try is a 429 with Retry-After, even with the right password', async () => {
    const email = 'target@example.com';
    const created = await admin(databaseUrl, 'user:create', '--email', email, '--password', 'right-password-1');
    expect(created.code).toBe(0);
    for (let i = 0; i < 5; i++) expect((await formLogin(email, `guess-${i}-wrong`)).status).toBe(401);
    const limited = await formLogin(email, 'right-password-1');
    expect(limited.status).toBe(429);
    expect(limited.page).toMatch(/Too many sign-in attempts; try again in \d+ s/);
    expect(limited.setCookie).toBe('');
  });

  test('forty guesses at once, the right password last: five are checked, the rest are 429 — on every process alike', async () => {
    const email = 'wave@example.com';
    expect((await admin(databaseUrl, 'user:create', '--email', email, '--password', 'right-password-2')).code).toBe(0);
    // A second process on the same database (and, on MariaDB, the same Redis): attempts are counted together.
    const config = t.service.kernel.config;
    const second =
      dialect === 'mysql'
        ? await startTestService(dialect, {
            DATABASE_URL: config.databaseUrl,
            REDIS_URL: config.redis as string,
            JOB_QUEUE_PREFIX: config.queue.prefix as string,
            WORKERS: '0',
          })
        : undefined;
    try {
      const origins = [origin, ...(second ? [new URL(second.url).origin] : [])];
      const wave = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          fetch(`${origins[i % origins.length]}/login`, {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded', origin: origins[i % origins.length] as string },
            body: new URLSearchParams({ email, password: i === 39 ? 'right-password-2' : `wrong-${i}`, next: '/' }),
          }).then(async (r) => {
            await r.text();
            return r.status;
          }),
        ),
      );
      expect(wave.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
      expect(wave.filter((s) => s === 429).length).toBeGreaterThanOrEqual(35);
      expect(wave.filter((s) => s === 303 || s === 200)).toEqual([]); // the right password came too late
    } finally {
      await second?.stop();
    }
  });

  test('a right password gives its attempt back: signing in again and again is never limited', async () => {
    for (let i = 0; i < 8; i++) expect((await formLogin(ADMIN.email, ADMIN.password)).status).toBe(303);
  });

  test('a POST /login from another site (its Origin) is refused', async () => {
    const r = await formLogin(ADMIN.email, ADMIN.password, { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    expect(r.setCookie).toBe('');
  });

  test('the REST operations answer the session: reads as is, writes only with the CSRF token', async () => {
    const me = await signedIn();
    const list = await me.call('GET', '/projects', { csrf: null });
    expect(list.status).toBe(200);
    const body = {
      name: 'From the console',
      builder_id: 'manual_list_builder',
      form_data: { companies: 'acme.example.com' },
    };
    const forged = await me.call('POST', '/projects', { body, csrf: null });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as any).detail).toContain('CSRF');
    const wrongToken = await me.call('POST', '/projects', { body, csrf: 'x'.repeat(32) });
    expect(wrongToken.status).toBe(403);
    const names = async () => ((await (await me.call('GET', '/projects', { csrf: null })).json()) as any).projects.map((p: any) => p.name);
    expect(await names()).not.toContain('From the console');
    const created = await me.call('POST', '/projects', { body });
    expect(created.status).toBe(201);
    expect(await names()).toContain('From the console');
  });

  test("another workspace's project is not found through a session", async () => {
    const other = await t.api('POST', '/projects', {
      body: { name: 'Not yours', builder_id: 'manual_list_builder', form_data: { companies: 'other.example.com' } },
    });
    expect(other.status).toBe(201);
    const me = await signedIn();
    const r = await me.call('GET', `/projects/${other.body.id}`, { csrf: null });
    expect(r.status).toBe(404);
    expect(((await r.json()) as any).detail).toContain('not found');
  });

  test('signing out needs the CSRF token, then the session is gone', async () => {
    const me = await signedIn();
    const forged = await fetch(`${origin}/logout`, { method: 'POST', headers: { cookie: me.cookie } });
    expect(forged.status).toBe(403);
    expect((await fetch(`${origin}/session`, { headers: { cookie: me.cookie } })).status).toBe(200);
    const out = await fetch(`${origin}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: me.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: me.session.csrf_token }),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await fetch(`${origin}/session`, { headers: { cookie: me.cookie } })).status).toBe(401);
    expect((await me.call('GET', '/projects', { csrf: null })).status).toBe(401);
  });

  test('an expired session is refused', async () => {
    const me = await signedIn();
    const hash = new Bun.CryptoHasher('sha256').update(me.cookie.split('=')[1] as string).digest('hex');
    await t.service.kernel.storage.sessions.extend(hash, Date.now() - 1);
    expect((await fetch(`${origin}/session`, { headers: { cookie: me.cookie } })).status).toBe(401);
    expect((await me.call('GET', '/projects', { csrf: null })).status).toBe(401);
  });

  test('admin CLI: user:create joins a workspace with a role; user:password changes it and ends the sessions', async () => {
    const email = 'member@example.com';
    const made = await admin(databaseUrl, 'user:create', '--email', email, '--password', 'first-password', '--workspace', t.workspaceId);
    expect(made).toEqual({ code: 0, out: { user_id: expect.any(String), email, workspace_id: t.workspaceId, role: 'member' } });
    const again = await admin(databaseUrl, 'user:create', '--email', email.toUpperCase(), '--password', 'first-password');
    expect(again.code).toBe(1);
    expect(again.out.error).toContain('exists');
    const weak = await admin(databaseUrl, 'user:create', '--email', 'weak@example.com', '--password', 'short');
    expect(weak.code).toBe(1);
    expect(weak.out.error).toContain('8 to 1024 characters');
    const badRole = await admin(databaseUrl, 'user:create', '--email', 'r@example.com', '--password', 'long-enough', '--role', 'king');
    expect(badRole.out.error).toContain('owner, admin, member');
    const me = await signedIn(email, 'first-password');
    expect(me.session).toMatchObject({ role: 'member', workspace: { id: t.workspaceId } });
    const changed = await admin(databaseUrl, 'user:password', '--email', email, '--password', 'second-password');
    expect(changed.out).toMatchObject({ password_changed: true, sessions_ended: true });
    expect((await fetch(`${origin}/session`, { headers: { cookie: me.cookie } })).status).toBe(401);
    expect((await formLogin(email, 'first-password')).status).toBe(401);
    expect((await formLogin(email, 'second-password')).status).toBe(303);
    expect((await admin(databaseUrl, 'user:password', '--email', 'ghost@example.com', '--password', 'whatever-1')).out.error).toContain(
      'No user',
    );
  });

  test('a member removed from the workspace loses their sessions in it at once', async () => {
    const email = 'leaver@example.com';
    const made = await admin(databaseUrl, 'user:create', '--email', email, '--password', 'leaver-password', '--workspace', t.workspaceId);
    const me = await signedIn(email, 'leaver-password');
    expect(await t.service.kernel.storage.users.removeMember(t.workspaceId, made.out.user_id)).toBe(true);
    expect((await me.call('GET', '/projects', { csrf: null })).status).toBe(401);
  });

  test('keys record their last use (key:list shows it)', async () => {
    expect((await t.api('GET', '/projects')).status).toBe(200);
    await Bun.sleep(100); // the touch is written after the answer
    const listed = await admin(databaseUrl, 'key:list', '--workspace', t.workspaceId);
    const [key] = listed.out.keys;
    expect(key.last_used_at).not.toBeNull();
    expect(Date.now() - Date.parse(key.last_used_at)).toBeLessThan(60_000);
    expect(key.created_by).toBeNull(); // issued by the test harness, not by a person
  });
});

test('a https PUBLIC_URL makes the session cookie Secure; BOOTSTRAP_ADMIN_* go together', async () => {
  const t = await startTestService('sqlite', {
    BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    PUBLIC_URL: 'https://wfs.example.com',
  });
  try {
    const origin = new URL(t.url).origin;
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://wfs.example.com' },
      body: new URLSearchParams({ email: ADMIN.email, password: ADMIN.password }),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toContain('Secure');
  } finally {
    await t.stop();
  }
  await expect(startTestService('sqlite', { BOOTSTRAP_ADMIN_EMAIL: 'a@example.com' })).rejects.toThrow('go together');
});
