import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { loadConfig } from '../core/config.ts';
import { setLogLevel } from '../core/log.ts';
import { issueApiKey } from '../core/identity/api-keys.ts';
import { startService } from '../app/service.ts';

/**
 * `bun run console:screenshots`: the README's pictures of the console, taken in Debian's Chromium
 * from a fresh service on an in-memory database in sandbox mode (a "dentists in Lyon" project, a formula column,
 * its settings, a webhook to a loopback endpoint with its delivery log), written to docs/screenshots/.
 */

const OUT = resolve(import.meta.dir, '../docs/screenshots');
const OWNER = { email: 'you@example.com', password: 'screenshot-password' };

setLogLevel('warn');
mkdirSync(OUT, { recursive: true });
// The webhook's endpoint is a loopback server below: a private address, opened here (read on each delivery).
process.env.ALLOW_PRIVATE_NETWORK = '127.0.0.1';
let endpointStatus = 200;
const endpoint = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response(endpointStatus === 200 ? 'ok' : 'down for maintenance', { status: endpointStatus }),
});
const service = await startService(
  loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    PORT: '0',
    PROVIDER_MODE: 'sandbox',
    BOOTSTRAP_ADMIN_EMAIL: OWNER.email,
    BOOTSTRAP_ADMIN_PASSWORD: OWNER.password,
    LOG_LEVEL: 'warn',
    // A delivery to a failing endpoint is tried for 1 s, then failed: the log shows both outcomes.
    WEBHOOK_RETRY_DELAYS_S: '0.2',
    WEBHOOK_RETRY_WINDOW_S: '1',
    WEBHOOK_POLL_MS: '50',
  }),
);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const rest = service.restUrl as string;
  const origin = new URL(rest).origin;
  const ws = await service.kernel.storage.workspaces.findByName('default');
  const { api_key: key } = await issueApiKey(service.kernel.storage.workspaces, ws?.id as string);
  const call = async (method: string, path: string, body?: unknown) =>
    (await fetch(rest + path, {
      method,
      headers: { 'service-api-key': key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json())) as any;
  const { project_id: id } = await call('POST', '/projects', {
    builder_id: 'google_maps_search',
    form_data: { query: 'dentists in Lyon', max_results: 60 },
    name: 'Dentists in Lyon',
  });
  while ((await call('GET', `/projects/${id}`)).builder_status.type !== 'completed') await Bun.sleep(50);
  await call('POST', '/projects', {
    builder_id: 'manual_list_builder',
    form_data: { companies: 'acme.example.com\nglobex.example.com' },
    name: 'Shortlist',
  });
  const domain = await call('POST', `/projects/${id}/columns`, {
    name: 'Domain',
    tool_id: 'domain_normalizer',
    config: { value: '{{Website}}' },
  });
  await call('POST', `/projects/${id}/columns/run`, { col_ids: [domain.col_id] });
  // A column whose values are records (shown by their primary field), run on the first rows only.
  const firm = await call('POST', `/projects/${id}/columns`, {
    name: 'Company',
    tool_id: 'company_enrich',
    config: { domain: '{{Website}}' },
  });
  const firstRows = (await call('GET', `/projects/${id}/rows?page_size=12`)).rows.map((r: { id: string }) => r.id);
  await call('POST', `/projects/${id}/columns/run`, { col_ids: [firm.col_id], row_ids: firstRows });

  const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });
  await page.goto(`${origin}/login`);
  await page.getByLabel('Email').fill(OWNER.email);
  await shot('sign-in');
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Dentists in Lyon' }).waitFor();
  await shot('projects');
  // The table with a few input columns hidden (the view is in the URL), so its tool columns are in the picture.
  const shown = ['Name', 'Website', 'Rating', 'Category'];
  const hidden = (await call('GET', `/projects/${id}`)).columns
    .filter((c: { type: string; name: string }) => c.type === 'input' && !shown.includes(c.name))
    .map((c: { col_id: string }) => c.col_id);
  const tableUrl = `${origin}/projects/${id}?hide=${hidden.join(',')}`;
  await page.goto(tableUrl);
  await page.locator('.ag-cell', { hasText: 'example.com' }).first().waitFor();
  await page.getByTestId('column-progress').first().waitFor();
  await Bun.sleep(500);
  await shot('project-table');
  await page.getByRole('button', { name: 'Column menu of Company' }).click();
  await shot('project-column-menu');
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  await page.getByRole('button', { name: 'Add rule to group 1', exact: true }).click();
  await page.getByLabel('Value of rule 1.1').fill('Dentist');
  await page.getByRole('button', { name: 'Add sort' }).click();
  await shot('project-filter-panel');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.keyboard.press('Escape');
  await Bun.sleep(500);
  await shot('project-filter');
  await page.goto(tableUrl);
  await page.getByRole('button', { name: 'Open row 1', exact: true }).click();
  await page.getByTestId('row-detail').waitFor();
  await Bun.sleep(300);
  await shot('project-row');
  // The same table in the dark (the system's scheme).
  const dark = await browser.newPage({ viewport: { width: 1280, height: 760 }, colorScheme: 'dark' });
  await dark.context().addCookies(await page.context().cookies());
  await dark.goto(tableUrl);
  await dark.getByTestId('column-progress').first().waitFor();
  await Bun.sleep(500);
  await dark.screenshot({ path: join(OUT, 'project-table-dark.png') });
  await dark.close();
  // A project's settings: a unique key and a schedule (set through the API), an inbound URL made on the page.
  const keyed = await fetch(`${rest}/projects/${id}/settings`, {
    method: 'PUT',
    headers: { 'service-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ unique_columns: ['Google Maps URL'], on_conflict: 'update' }),
  });
  if (!keyed.ok) throw new Error(`unique key refused: ${keyed.status} ${await keyed.text()}`);
  await call('PUT', `/projects/${id}/schedule`, { cron: '0 7 * * 1-5', timezone: 'Europe/Paris' });
  await page.goto(`${origin}/projects/${id}/settings`);
  await page.getByTestId('next-run').waitFor();
  await page.getByRole('button', { name: 'Make an inbound URL' }).click();
  await page.getByTestId('inbound-url').waitFor();
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(OUT, 'project-settings.png'), fullPage: true });
  await page.goto(`${origin}/projects/new`);
  await page.getByRole('radio', { name: /Company search/ }).check();
  await page.getByLabel('Organization locations').fill('Berlin, Lyon');
  await shot('new-project');
  await page.goto(`${origin}/settings/integration?tab=api`);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key').waitFor();
  await shot('settings-api');
  await page.goto(`${origin}/settings/credits`);
  await page.getByRole('heading', { name: 'Ledger' }).waitFor();
  await shot('settings-credits');
  await page.goto(`${origin}/settings/members`);
  await page.getByRole('heading', { name: 'Invite a member' }).waitFor();
  await shot('settings-members');
  // Browser sign-in of an MCP client: its consent page, then its entry under Connected apps.
  const redirect = 'http://127.0.0.1:33418/oauth/callback';
  const client = (await (
    await fetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Claude', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${origin}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirect,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: service.mcpUrl as string,
  }))
    authorize.searchParams.set(k, v);
  await page.goto(authorize.href);
  await shot('oauth-consent');
  const callback = page.waitForRequest((r) => r.url().startsWith(redirect));
  await page.getByRole('button', { name: 'Allow' }).click();
  const code = new URL((await callback).url()).searchParams.get('code') as string;
  // Nothing listens at the redirect: Chromium's error page for it must have loaded, or it interrupts the next goto.
  await page.waitForURL((url) => url.origin !== origin);
  await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirect,
      client_id: client.client_id,
      code_verifier: verifier,
    }),
  });
  await page.goto(`${origin}/settings/connections`);
  await page.getByRole('button', { name: 'Disconnect Claude' }).waitFor();
  await shot('settings-connections');
  // Settings → Webhooks with a webhook's delivery log: one event delivered, one failed (the endpoint answered 503).
  const hook = await call('POST', '/webhooks', {
    url: `http://127.0.0.1:${endpoint.port}/hooks/crm`,
    events: ['builder.completed', 'builder.failed'],
    description: 'CRM sync',
  });
  const settled = async () => {
    while ((await call('GET', `/webhooks/${hook.id}/deliveries`)).deliveries.some((d: { status: string }) => d.status === 'pending'))
      await Bun.sleep(100);
  };
  for (const [name, status] of [
    ['Dentists in Villeurbanne', 200],
    ['Dentists in Bron', 503],
  ] as const) {
    endpointStatus = status;
    await call('POST', '/projects', {
      builder_id: 'google_maps_search',
      form_data: { query: name.toLowerCase(), max_results: 20 },
      name,
    });
    while ((await call('GET', `/webhooks/${hook.id}/deliveries`)).deliveries.length < (status === 200 ? 1 : 2)) await Bun.sleep(50);
    await settled();
  }
  await page.goto(`${origin}/settings/webhooks?deliveries=${hook.id}`);
  await page
    .getByRole('region', { name: `Deliveries to ${hook.url}` })
    .locator('tbody tr')
    .nth(1)
    .waitFor();
  await shot('settings-webhooks');
  console.log(`screenshots in ${OUT}`);
} finally {
  await browser.close();
  await service.stop();
  endpoint.stop(true);
}
