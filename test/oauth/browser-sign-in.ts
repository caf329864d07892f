import type { Page } from 'playwright-core';

/** A loopback HTTP server standing in for a client's OAuth callback: each visit's query, in order. */
export function callbackServer() {
  const waiting: ((q: URLSearchParams) => void)[] = [];
  const arrived: URLSearchParams[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname !== '/callback') return new Response('not found', { status: 404 }); // the browser's favicon.ico
      const query = url.searchParams;
      const next = waiting.shift();
      if (next) next(query);
      else arrived.push(query);
      return new Response('<!doctype html><title>Signed in</title><p>You can close this window.</p>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/callback`,
    /** The next callback's query (one that already came, or the next to come). */
    next(): Promise<URLSearchParams> {
      const early = arrived.shift();
      return early ? Promise.resolve(early) : new Promise((resolve) => waiting.push(resolve));
    },
    stop: () => server.stop(true),
  };
}

/**
 * What a person does in the browser a client opened: the sign-in form (when not signed in yet),
 * then the consent page — a workspace picked when they have several — and a click on Allow or Deny.
 */
export async function signInAndDecide(
  page: Page,
  authorizationUrl: string,
  who: { email: string; password: string },
  decision: 'Allow' | 'Deny',
  workspaceName?: string,
): Promise<string> {
  await page.goto(authorizationUrl);
  if (new URL(page.url()).pathname === '/login') {
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  const heading = await page.getByRole('heading', { level: 1 }).textContent();
  if (workspaceName) await page.getByLabel('Workspace to grant').selectOption({ label: workspaceName });
  await page.getByRole('button', { name: decision }).click();
  try {
    await page.waitForURL((url) => !url.pathname.startsWith('/oauth/authorize'));
  } catch (e) {
    const alert = await page
      .getByRole('alert')
      .textContent({ timeout: 1000 })
      .catch(() => null);
    throw new Error(`the consent did not leave ${page.url()}: ${alert ?? (await page.content()).slice(0, 2000)}`);
  }
  return heading ?? '';
}
