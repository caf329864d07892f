import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DIALECTS } from './support/databases.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * Settings → Integrations → API and Settings → Members, as the console calls them (docs/console.md): keys
 * created, rotated and revoked by owners and admins, working (or not) against the REST API at once;
 * members added and their roles changed; every refusal a member or a forged request meets.
 */

const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

describe.each(DIALECTS)('keys and members from the console on %s', (dialect) => {
  let t: TestService;
  let origin: string;

  beforeAll(async () => {
    t = await startTestService(dialect, { BOOTSTRAP_ADMIN_EMAIL: OWNER.email, BOOTSTRAP_ADMIN_PASSWORD: OWNER.password });
    origin = new URL(t.url).origin;
  });
  afterAll(() => t.stop());

  async function signIn(email: string, password: string) {
    const res = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(res.status).toBe(200);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const session = (await res.json()) as any;
    const call = async (method: string, path: string, body?: unknown, csrf: string | null = session.csrf_token) => {
      const r = await fetch(`${origin}${path}`, {
        method,
        headers: {
          cookie,
          ...(csrf ? { 'x-csrf-token': csrf } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    };
    return { session, call };
  }

  const withKey = (key: string) => fetch(`${t.url}/projects`, { headers: { 'service-api-key': key } }).then((r) => r.status);

  test('an owner creates a key (shown once), which works at once and is listed with its creator and last use', async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    const created = await owner.call('POST', '/account/keys');
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^wfs_[0-9a-f]{8}_[\w-]{43}$/);
    expect(created.body.api_key.startsWith(created.body.prefix)).toBe(true);
    expect(await withKey(created.body.api_key)).toBe(200);
    await Bun.sleep(100);
    const listed = await owner.call('GET', '/account/keys', undefined, null);
    expect(listed.status).toBe(200);
    const key = listed.body.keys.find((k: any) => k.prefix === created.body.prefix);
    expect(key).toMatchObject({ created_by: OWNER.email, revoked_at: null });
    expect(key.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key.slice(14)); // never the secret again
  });

  test('rotate: the new key works and the old one is refused at once; revoke: refused, and a second revoke is 404', async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    const first = (await owner.call('POST', '/account/keys')).body;
    const rotated = await owner.call('POST', `/account/keys/${first.prefix}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.replaces).toBe(first.prefix);
    expect(await withKey(first.api_key)).toBe(401);
    expect(await withKey(rotated.body.api_key)).toBe(200);
    expect((await owner.call('POST', `/account/keys/${first.prefix}/rotate`)).status).toBe(404);
    expect((await owner.call('DELETE', `/account/keys/${rotated.body.prefix}`)).status).toBe(204);
    expect(await withKey(rotated.body.api_key)).toBe(401);
    expect((await owner.call('DELETE', `/account/keys/${rotated.body.prefix}`)).status).toBe(404);
  });

  test("forged requests and other workspaces' keys change nothing", async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    const before = (await owner.call('GET', '/account/keys', undefined, null)).body.keys.length;
    const forged = await owner.call('POST', '/account/keys', undefined, null);
    expect(forged.status).toBe(403);
    expect(forged.body.detail).toContain('CSRF');
    expect((await owner.call('GET', '/account/keys', undefined, null)).body.keys.length).toBe(before);
    // The test harness's key belongs to another workspace: not found here, and still working.
    const foreignPrefix = t.key.slice(0, 12);
    expect((await owner.call('DELETE', `/account/keys/${foreignPrefix}`)).status).toBe(404);
    expect((await owner.call('POST', `/account/keys/${foreignPrefix}/rotate`)).status).toBe(404);
    expect(await withKey(t.key)).toBe(200);
    expect((await owner.call('DELETE', '/account/keys/not-a-prefix')).status).toBe(422);
    // A key is no session: it cannot manage keys.
    const withApiKey = await fetch(`${origin}/account/keys`, { headers: { 'service-api-key': t.key } });
    expect(withApiKey.status).toBe(401);
  });

  test('members: an owner invites people with roles; a member manages nothing; the only owner stays an owner', async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    // A new person gets an account with a first password and joins by signing in with it.
    const added = await owner.call('POST', '/account/members', { email: 'Mia@Example.com', role: 'member', password: 'mia-password-1' });
    expect(added.status).toBe(202);
    expect(added.body).toMatchObject({ email: 'mia@example.com', role: 'member', status: 'invited' });
    const mia = await signIn('mia@example.com', 'mia-password-1');
    expect(mia.session).toMatchObject({ role: 'member', workspace: { name: 'default' } });
    expect((await owner.call('POST', '/account/members', { email: 'mia@example.com' })).status).toBe(409);
    const miaId = mia.session.user.id as string;
    for (const [method, path] of [
      ['GET', '/account/keys'],
      ['POST', '/account/keys'],
      ['POST', '/account/members'],
      ['GET', '/account/ledger'],
    ] as const) {
      const r = await mia.call(
        method,
        path,
        method === 'POST' && path.endsWith('members') ? { email: 'x@example.com', password: 'xxxxxxxx' } : undefined,
      );
      expect([path, r.status]).toEqual([path, 403]);
      expect(r.body.detail).toContain('owners and admins');
    }
    // Members see who is in the workspace.
    const listed = await mia.call('GET', '/account/members', undefined, null);
    expect(listed.body.members.map((m: any) => [m.email, m.role])).toEqual([
      [OWNER.email, 'owner'],
      ['mia@example.com', 'member'],
    ]);
    // An admin manages keys but makes no owner.
    const promoted = await owner.call('PATCH', `/account/members/${miaId}`, { role: 'admin' });
    expect(promoted.body.role).toBe('admin');
    const asAdmin = await signIn('mia@example.com', 'mia-password-1');
    const miasKey = await asAdmin.call('POST', '/account/keys');
    expect(miasKey.status).toBe(201);
    expect(await withKey(miasKey.body.api_key)).toBe(200);
    const ownerId = listed.body.members[0].user_id;
    expect((await asAdmin.call('PATCH', `/account/members/${miaId}`, { role: 'owner' })).status).toBe(403);
    expect((await asAdmin.call('DELETE', `/account/members/${ownerId}`)).status).toBe(403);
    // The only owner can neither step down nor leave.
    const demote = await owner.call('PATCH', `/account/members/${ownerId}`, { role: 'member' });
    expect(demote.status).toBe(409);
    expect(demote.body.detail).toContain('only owner');
    expect((await owner.call('DELETE', `/account/members/${ownerId}`)).status).toBe(409);
    expect((await owner.call('PATCH', `/account/members/${miaId}`, { role: 'king' })).status).toBe(422);
    // Removed: Mia's sessions in this workspace stop at once, and so do the keys she made.
    expect((await owner.call('DELETE', `/account/members/${miaId}`)).status).toBe(204);
    expect((await asAdmin.call('GET', '/account/members', undefined, null)).status).toBe(401);
    expect(await withKey(miasKey.body.api_key)).toBe(401);
    expect((await owner.call('DELETE', `/account/members/${miaId}`)).status).toBe(404);
  });

  test('download links and inbound URLs stop with the key that made them, and with the plan’s API access', async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    const made = (await owner.call('POST', '/account/keys')).body.api_key as string;
    const other = (await owner.call('POST', '/account/keys')).body.api_key as string;
    const as = (key: string) => ({ headers: { 'service-api-key': key } });
    const project = await t.api('POST', '/projects', {
      body: { builder_id: 'csv_import_builder', form_data: { csv_text: 'Name\nAcme' } },
      ...as(other),
    });
    const pid = project.body.project_id;
    await t.api('GET', `/projects/${pid}/wait?wait_seconds=10`, as(other));
    const link = (await t.api('POST', `/projects/${pid}/exports`, { body: {}, ...as(made) })).body.url as string;
    const inbound = (await t.api('POST', `/projects/${pid}/inbound`, { body: {}, ...as(made) })).body.url as string;
    const post = () => fetch(inbound, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Name":"Via inbound"}' });
    expect((await fetch(link)).status).toBe(200);
    expect((await post()).status).toBeLessThan(300);
    const prefix = made.split('_').slice(0, 2).join('_');
    expect((await owner.call('DELETE', `/account/keys/${prefix}`)).status).toBe(204);
    const dead = await fetch(link);
    expect(dead.status).toBe(401);
    expect(JSON.stringify(await dead.json())).toContain('revoked');
    expect((await post()).status).toBe(404);
    // Made with a key that lives on: they work until the plan loses API access.
    const link2 = (await t.api('POST', `/projects/${pid}/exports`, { body: {}, ...as(other) })).body.url as string;
    const inbound2 = (await t.api('POST', `/projects/${pid}/inbound`, { body: {}, ...as(other) })).body.url as string;
    expect((await fetch(link2)).status).toBe(200);
    const workspaceId = owner.session.workspace.id as string;
    await t.service.kernel.storage.workspaces.setPlan(workspaceId, 'free');
    try {
      expect((await fetch(link2)).status).toBe(403);
      const refused = await fetch(inbound2, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"Name":"X"}' });
      expect(refused.status).toBe(403);
    } finally {
      await t.service.kernel.storage.workspaces.setPlan(workspaceId, 'pro');
    }
  });

  test('an existing account is invited, never added: it joins only by accepting, and the answer never tells whether an email has an account', async () => {
    const owner = await signIn(OWNER.email, OWNER.password);
    // Zed has an account, in a workspace of his own.
    const zedWorkspace = await t.service.kernel.storage.workspaces.create({ name: 'zed-co', plan: 'pro' });
    const zedUser = await t.service.kernel.storage.users.create({
      email: 'zed@example.com',
      passwordHash: await Bun.password.hash('zed-password-1'),
    });
    await t.service.kernel.storage.users.setRole(zedWorkspace.id, zedUser?.id as string, 'owner');
    const forZed = await owner.call('POST', '/account/members', { email: 'zed@example.com', role: 'member' });
    const forNobody = await owner.call('POST', '/account/members', { email: 'nobody@example.com', role: 'member' });
    const shape = (r: { status: number; body: any }) => [r.status, Object.keys(r.body).sort(), r.body.status];
    expect(shape(forZed)).toEqual(shape(forNobody));
    // Not a member, and the workspace is not in his OAuth picker, until he says yes.
    const workspacesOf = async () =>
      (await t.service.kernel.storage.users.workspacesOf(zedUser?.id as string)).map((w) => w.workspace.name);
    expect(await workspacesOf()).toEqual(['zed-co']);
    const listed = await owner.call('GET', '/account/members', undefined, null);
    expect(listed.body.invitations.map((i: any) => i.email).sort()).toEqual(['nobody@example.com', 'zed@example.com']);
    const zed = await signIn('zed@example.com', 'zed-password-1');
    expect(zed.session.workspace.name).toBe('zed-co');
    const mine = await zed.call('GET', '/account/invitations', undefined, null);
    expect(mine.body.invitations).toHaveLength(1);
    expect(mine.body.invitations[0]).toMatchObject({ workspace: { name: 'default' }, role: 'member' });
    // Another person cannot answer it, and a forged answer (no CSRF token) changes nothing.
    expect((await owner.call('POST', `/account/invitations/${mine.body.invitations[0].id}/accept`)).status).toBe(404);
    expect((await zed.call('POST', `/account/invitations/${mine.body.invitations[0].id}/accept`, undefined, null)).status).toBe(403);
    const accepted = await zed.call('POST', `/account/invitations/${mine.body.invitations[0].id}/accept`);
    expect(accepted.status).toBe(200);
    expect(await workspacesOf()).toEqual(['zed-co', 'default']);
    // The owner withdraws the other one.
    const nobody = listed.body.invitations.find((i: any) => i.email === 'nobody@example.com');
    expect((await owner.call('DELETE', `/account/invitations/${nobody.id}`)).status).toBe(204);
    expect((await owner.call('GET', '/account/members', undefined, null)).body.invitations).toEqual([]);
  });
});
