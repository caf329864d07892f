import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { operations } from '../core/operations/index.ts';
import { startTestService, type TestService } from './support/test-service.ts';

/**
 * Swagger UI at `{BASE_PATH}/docs` shows every operation in a real browser (docs/api.md): Debian's
 * Chromium, driven by playwright-core, loads the page — under the default base path and another —
 * and counts the operations it renders. The page may fetch nothing but the service itself.
 */

const CHROMIUM = '/usr/bin/chromium';

describe.each([['/api/enterprise'], ['/v2/workflow']])('Swagger UI under BASE_PATH %s', (basePath) => {
  let browser: Browser;
  let t: TestService;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: the Swagger UI test drives Debian's Chromium (scripts/setup-services.sh installs it)`);
    }
    t = await startTestService('sqlite', { BASE_PATH: basePath });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  test('renders every operation of the table (and the routes outside it), fetching nothing but the service', async () => {
    const origin = new URL(t.url).origin;
    // The operations of the table, and the documented routes that are no MCP tool: GET …/events (a
    // stream), GET …/export.csv (a file), POST …/inbound/{token} (keyless) and POST …/projects/import.csv (a file).
    const documented = operations.length + 4;
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    await page.goto(`${origin}${basePath}/docs`);
    await page
      .waitForFunction((n) => document.querySelectorAll('.opblock').length >= n, documented, { timeout: 20_000 })
      .catch(async () => {
        throw new Error(`Swagger UI rendered no operations; it shows: ${(await page.textContent('#swagger-ui'))?.slice(0, 300)}`);
      });
    expect(await page.locator('.opblock').count()).toBe(documented);
    expect(await page.textContent('body')).not.toContain('Failed to load');
    // Swagger UI puts zero-width spaces in long paths so that they wrap.
    const paths = (await page.locator('.opblock-summary-path').allTextContents()).map((p) => p.replace(/\u200b/g, ''));
    expect(paths.filter((path) => !path.startsWith(`${basePath}/`))).toEqual([]);
    expect(paths.length).toBe(documented);
    expect(paths).toContain(`${basePath}/projects/{project_id}/events`);
    expect(elsewhere).toEqual([]);
    await page.close();
  }, 40_000);

  test('Try it out calls the service: a JSON query parameter is typed as text, the answer comes back', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${new URL(t.url).origin}${basePath}/docs#/Rows/get_project_rows`);
    const rows = page.locator('#operations-Rows-get_project_rows');
    await rows.locator('.parameters').waitFor({ timeout: 20_000 });
    // Swagger UI would offer a file upload for a string with a contentMediaType.
    expect(await rows.locator('input[type=file]').count()).toBe(0);
    expect(await rows.locator('tr[data-param-name="filter_groups"] input[type=text]').count()).toBe(1);

    await page.locator('.btn.authorize').first().click();
    await page.locator('.auth-container input').fill(t.key);
    await page.locator('.auth-btn-wrapper .authorize').click();
    await page.locator('.btn-done').click();
    const credits = page.locator('#operations-Credits-get_credits');
    await credits.locator('.opblock-summary').click();
    await credits.locator('.try-out__btn').click();
    await credits.locator('.execute').click();
    const status = credits.locator('.live-responses-table tbody .response-col_status').first();
    await status.waitFor({ timeout: 20_000 });
    expect((await status.textContent())?.trim()).toBe('200');
    await page.close();
  }, 40_000);
});
