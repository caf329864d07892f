import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { setEnv } from '../plugins/enrich-helpers.ts';
import type { TestService } from '../support/test-service.ts';
import { accessible, restCall, startConsole, stopConsole } from './console-support.ts';

/**
 * Settings → Webhooks in Debian's Chromium (as console-browser.test.ts): a person creates a webhook
 * (a refused URL and no event show the service's 422), sees its secret once and copies it, reads the
 * delivery log of an endpoint that keeps failing (status, attempts, its answer, the error), fixes the
 * endpoint and re-sends: the same webhook-id arrives, signed with that secret, and the log says
 * delivered. The endpoint is a loopback server, allowed by ALLOW_PRIVATE_NETWORK as in webhooks.test.ts.
 */

/** A loopback endpoint standing in for a customer's: records every POST, answers `status`. */
function endpoint() {
  const received: { headers: Record<string, string>; body: string }[] = [];
  let status = 200;
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response(status === 200 ? 'ok' : 'down for maintenance', { status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/crm`,
    received,
    answer(s: number) {
      status = s;
    },
    stop: () => server.stop(true),
  };
}

describe('Settings → Webhooks in Chromium', () => {
  let browser: Browser;
  let t: TestService;
  let origin: string;
  let page: Page;
  let ownerKey: string;
  let restore: () => void;
  const ep = endpoint();

  beforeAll(async () => {
    // Loopback endpoints are private addresses: allowed here (read from process.env on each check).
    restore = setEnv({ ALLOW_PRIVATE_NETWORK: '127.0.0.1' });
    // Retries 0.2 s apart for 1 s: a delivery to an endpoint that keeps failing is failed within seconds.
    ({ t, origin, ownerKey, browser, page } = await startConsole({
      env: { WEBHOOK_RETRY_DELAYS_S: '0.2', WEBHOOK_RETRY_WINDOW_S: '1', WEBHOOK_POLL_MS: '50' },
    }));
  }, 60_000);
  afterAll(async () => {
    await stopConsole({ browser, t });
    ep.stop();
    restore?.();
  });

  const rest = (method: string, path: string, body?: unknown) => restCall(t.url, ownerKey, method, path, body);

  /** The webhook made in the first test, and its secret as the page showed it. */
  let hook: { id: string; secret: string };

  test('create a webhook: refused input shows where it was typed; the secret is shown once, with a copy button', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Settings · Webhooks' }).waitFor();
    await page.getByText('No webhook yet.').waitFor();
    await accessible(page, 'webhooks page, empty');
    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Create a webhook' }) });
    const url = page.getByLabel('Endpoint URL');

    // A private address that ALLOW_PRIVATE_NETWORK does not open: the service's 422, on the field.
    await url.fill('http://10.0.0.8/hook');
    await page.getByRole('checkbox', { name: /^builder\.completed/ }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await form.getByRole('alert').filter({ hasText: 'private or reserved address' }).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'webhook form with a refused URL');

    // No event: refused too.
    await url.fill(ep.url);
    await page.getByRole('checkbox', { name: /^builder\.completed/ }).uncheck();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await form.getByRole('alert').waitFor();
    expect((await rest('GET', '/webhooks')).body.webhooks).toEqual([]);

    await page.getByRole('checkbox', { name: /^builder\.completed/ }).check();
    await page.getByRole('checkbox', { name: /^builder\.failed/ }).check();
    await page.getByLabel('Description (optional)').fill('CRM sync');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.getByTestId('new-secret').textContent()) as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(await form.getByRole('alert').count()).toBe(0);
    expect(await url.inputValue()).toBe(''); // the form is ready for another one
    await page.getByRole('button', { name: 'Copy secret' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const [made] = (await rest('GET', '/webhooks')).body.webhooks;
    expect(made).toMatchObject({ url: ep.url, events: ['builder.completed', 'builder.failed'], description: 'CRM sync' });
    const row = page.locator(`tr[data-webhook="${made.id}"]`);
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      ep.url,
      'builder.completed, builder.failed',
      'CRM sync',
      expect.any(String),
      'DeliveriesDelete',
    ]);
    await accessible(page, 'webhook created, secret shown');
    hook = { id: made.id, secret };

    // Once: after a reload the webhook is listed, its secret is nowhere.
    await page.reload();
    await row.waitFor();
    expect(await page.getByTestId('new-secret').count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain(secret);
  });

  test('the delivery log shows a failing endpoint’s attempts, answer and error; Re-send delivers the same webhook-id once it is fixed', async () => {
    ep.answer(503);
    const project = await rest('POST', '/projects', {
      builder_id: 'csv_import_builder',
      form_data: { csv_text: 'Name\nAcme\nGlobex' },
      name: 'Hooked',
    });
    expect(project.status).toBe(201);
    await page.goto(`${origin}/settings/webhooks`);
    await page.getByRole('link', { name: `Deliveries to ${ep.url}` }).click();
    const log = page.getByRole('region', { name: `Deliveries to ${ep.url}` });
    await log.waitFor();
    expect(new URL(page.url()).search).toBe(`?deliveries=${hook.id}`);
    // The page follows a pending delivery until the retry window (1 s here) is over: failed.
    const delivery = log.locator('tbody tr').first();
    await delivery.getByTestId('status').filter({ hasText: 'failed' }).waitFor();
    const [d] = (await rest('GET', `/webhooks/${hook.id}/deliveries`)).body.deliveries;
    expect(d).toMatchObject({ event_type: 'builder.completed', status: 'failed', response_status: 503 });
    expect(d.attempts).toBeGreaterThan(1);
    expect(await delivery.getAttribute('data-delivery')).toBe(d.id);
    expect(await delivery.getByTestId('attempts').textContent()).toBe(String(d.attempts));
    expect(await delivery.getByTestId('response').textContent()).toBe('503');
    expect(await delivery.getByTestId('error').textContent()).toBe(d.error);
    expect(d.error).toContain('503');
    expect(await delivery.locator('time').getAttribute('datetime')).toBe(d.created_at);
    expect(ep.received.length).toBe(d.attempts);
    await accessible(page, 'delivery log with a failed delivery');

    // The body that was sent, under the event.
    await delivery.locator('summary', { hasText: 'builder.completed' }).click();
    expect(JSON.parse((await delivery.locator('pre').textContent()) as string)).toMatchObject({
      type: 'builder.completed',
      data: { project_id: project.body.project_id, name: 'Hooked', rows_created: 2 },
    });

    // The endpoint is fixed; Re-send.
    ep.answer(200);
    const before = ep.received.length;
    await delivery.getByRole('button', { name: `Re-send builder.completed ${d.id}` }).click();
    await log.getByRole('status').filter({ hasText: 'sent again' }).waitFor();
    await delivery.getByTestId('status').filter({ hasText: 'delivered' }).waitFor();
    expect(await delivery.getByTestId('response').textContent()).toBe('200');
    expect(await delivery.getByTestId('attempts').textContent()).toBe('1'); // a re-send counts its attempts anew
    expect(await delivery.getByTestId('error').textContent()).toBe('—');
    expect(ep.received.length).toBe(before + 1);
    const got = ep.received[before]!;
    expect(got.headers['webhook-id']).toBe(d.id);
    // Signed with the secret the page showed once.
    expect(new Webhook(hook.secret).verify(got.body, got.headers)).toMatchObject({ type: 'builder.completed' });
    await accessible(page, 'delivery log after a re-send');
  });

  test('delete a webhook: asked first, then gone with its log', async () => {
    await page.goto(`${origin}/settings/webhooks?deliveries=${hook.id}`);
    await page.getByRole('region', { name: `Deliveries to ${ep.url}` }).waitFor();
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByRole('button', { name: `Delete the webhook to ${ep.url}` }).click();
    expect((await rest('GET', '/webhooks')).body.webhooks).toHaveLength(1);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Delete the webhook to ${ep.url}` }).click();
    await page.getByText('No webhook yet.').waitFor();
    expect(await page.getByRole('region', { name: `Deliveries to ${ep.url}` }).count()).toBe(0);
    expect(new URL(page.url()).search).toBe('');
    expect((await rest('GET', '/webhooks')).body.webhooks).toEqual([]);
    expect((await rest('GET', `/webhooks/${hook.id}/deliveries`)).status).toBe(404);
  });
});
