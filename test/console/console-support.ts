import { expect } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { issueApiKey } from '../../core/identity/api-keys.ts';
import { startTestService, type TestService } from '../support/test-service.ts';

/**
 * What the console tests share: a service on SQLite whose bootstrap admin (OWNER) owns the `default`
 * workspace, a key of that workspace, Debian's Chromium with one page (clipboard allowed), signed in
 * through /login; axe-core on a page; a REST call with a key.
 */

export const CHROMIUM = '/usr/bin/chromium';
export const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface ConsoleTest {
  t: TestService;
  /** Where the console is served (the REST port, outside BASE_PATH). */
  origin: string;
  /** A key of the owner's workspace (`default`), the one the console signs in to. */
  ownerKey: string;
  browser: Browser;
  page: Page;
}

/**
 * Starts the service (with `env` added to the bootstrap admin's) and Chromium, and signs the page in
 * as OWNER unless `signIn` is false. What was started is stopped again if a later step fails.
 */
export async function startConsole(options: { env?: Record<string, string>; signIn?: boolean } = {}): Promise<ConsoleTest> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: the console tests drive Debian's Chromium (scripts/setup-services.sh)`);
  const t = await startTestService('sqlite', {
    BOOTSTRAP_ADMIN_EMAIL: OWNER.email,
    BOOTSTRAP_ADMIN_PASSWORD: OWNER.password,
    ...options.env,
  });
  let browser: Browser | undefined;
  try {
    const origin = new URL(t.url).origin;
    const ws = await t.service.kernel.storage.workspaces.findByName('default');
    const ownerKey = (await issueApiKey(t.service.kernel.storage.workspaces, ws?.id as string)).api_key;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
    watchErrors(browser, context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    if (options.signIn !== false) await signIn(page, origin);
    return { t, origin, ownerKey, browser, page };
  } catch (e) {
    await stopConsole({ t, browser });
    throw e;
  }
}

/** What the browser's pages logged as errors: a script error, an error on the console. */
const loggedErrors = new WeakMap<Browser, string[]>();

/**
 * Records every error the pages of `context` log. A refused request the page asked for on purpose
 * (a 4xx the test provokes) is Chromium's network line, not the page's error, and is left out.
 */
function watchErrors(browser: Browser, context: BrowserContext): void {
  loggedErrors.set(browser, []);
  context.on('page', (page) => watchPage(browser, page));
}

/** Records what `page` logs as errors, with the browser's other pages (for a page of a context of its own: a phone, a dark scheme). */
export function watchPage(browser: Browser, page: Page): void {
  const errors = loggedErrors.get(browser) ?? [];
  loggedErrors.set(browser, errors);
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
}

/**
 * Closes Chromium and stops the service, whichever of them was started; then fails if a page
 * logged an error meanwhile (no browser test may pass over a console error).
 */
export async function stopConsole({ t, browser }: { t?: TestService; browser?: Browser }): Promise<void> {
  const errors = browser ? (loggedErrors.get(browser) ?? []) : [];
  await browser?.close();
  await t?.stop();
  if (errors.length) throw new Error(`the browser logged ${errors.length} error(s):\n${errors.slice(0, 10).join('\n')}`);
}

/** Signs in through the form at /login and waits for the projects. */
export async function signIn(page: Page, origin: string, who = OWNER): Promise<void> {
  await page.goto(`${origin}/login`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
}

/** axe-core on the page as it is: no serious or critical violation. */
export async function accessible(page: Page, where: string): Promise<void> {
  await page.addScriptTag({ content: AXE });
  const { violations, checked } = await page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string; help: string; nodes: { target: unknown[] }[] }[]; passes: unknown[] };
    const result = await (window as unknown as { axe: { run(): Promise<Result> } }).axe.run();
    return {
      violations: result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => `${v.id}: ${v.help} (${v.nodes.length} × e.g. ${JSON.stringify(v.nodes[0]?.target)})`),
      checked: result.passes.length,
    };
  });
  expect(checked).toBeGreaterThan(5); // axe ran its rules on this page
  expect({ where, violations }).toEqual({ where, violations: [] });
}

/** A REST call with `key` (JSON body if any): its status and JSON answer (null when empty). */
export async function restCall(
  url: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { 'service-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}
