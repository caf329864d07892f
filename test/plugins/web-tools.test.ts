import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import techStack from '../../plugins/tools/tech_stack/index.ts';
import websiteInfo from '../../plugins/tools/website_info/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { type FakeServer, fakeSite } from '../support/fake-providers.ts';
import { runTool } from 'workflow-service/plugin-testing';
import { startTestService, type TestService } from '../support/test-service.ts';
import { addColumn, cellOf, csvProject, runColumns, setEnv, SERVICE_START_MS } from './enrich-helpers.ts';

const HOME = `<!doctype html>
<html lang="en-GB"><head>
  <meta charset="utf-8">
  <title> Acme Rockets — Rockets for everyone </title>
  <meta name="description" content="Acme makes rockets, anvils and portable holes.">
  <meta name="generator" content="WordPress 6.4.2">
  <link rel="stylesheet" href="/wp-content/themes/acme/style.css">
  <script src="/wp-includes/js/jquery/jquery.min.js?ver=3.7.1"></script>
  <script type="application/ld+json">{"@type": "Organization", "name": "Acme", "telephone": "+33 1 42 68 53 00", "email": "press@acme.example.com"}</script>
  <script>var tracker = "noreply@tracking.example.net";</script>
</head><body>
  <a href="https://www.linkedin.com/company/acme-rockets/">LinkedIn</a>
  <a href="https://twitter.com/intent/tweet?text=hi">Share</a>
  <a href="https://x.com/acmerockets">X</a>
  <a href="https://github.com/acme">GitHub</a>
  <a href="https://www.facebook.com/sharer/sharer.php?u=x">Share on Facebook</a>
  <a href="mailto:Sales@Acme.example.com?subject=Hello">Write to us</a>
  <a href="tel:+1-202-555-0143">Call</a>
  <p>Support: help@acme.example.com. Our logo: logo@2x.png</p>
</body></html>`;

describe.each(DIALECTS)('website_info and tech_stack on %s', (dialect) => {
  let t: TestService;
  let site: FakeServer;
  let restoreEnv: () => void;
  let pid: string;
  beforeAll(async () => {
    restoreEnv = setEnv({ ALLOW_PRIVATE_NETWORK: '1' });
    site = fakeSite(
      {
        '/': HOME,
        '/old': () => Response.redirect('/', 301),
        '/missing': () => new Response('no', { status: 404 }),
        '/broken': () => new Response('oops', { status: 500 }),
        '/huge': () =>
          new Response(`<html><body>${'x'.repeat(3 * 1024 * 1024)}</body></html>`, { headers: { 'content-type': 'text/html' } }),
        '/data.json': () => Response.json({ not: 'html' }),
      },
      { server: 'nginx/1.25.3', 'x-powered-by': 'PHP/8.2.1' },
    );
    t = await startTestService(dialect, { PROVIDER_MODE: 'live' });
    const rows = [
      ['Acme', `${site.url}/`],
      ['Moved', `${site.url}/old`],
      ['Gone', `${site.url}/missing`],
      ['Broken', `${site.url}/broken`],
      ['Huge', `${site.url}/huge`],
      ['Json', `${site.url}/data.json`],
      ['Nowhere', 'not a website'],
    ];
    pid = await csvProject(t, `Name,Website\n${rows.map((r) => r.join(',')).join('\n')}\n`);
  }, SERVICE_START_MS);
  afterAll(async () => {
    await t.stop();
    site.stop();
    restoreEnv();
  });

  test('website_info reads title, description, socials, emails and phones through the real service', async () => {
    const col = await addColumn(t, pid, 'Site', 'website_info', { url: '{{Website}}' });
    const rows = await runColumns(t, pid, [col]);
    const acme = cellOf(rows, 'Name', 'Acme', 'Site');
    expect(acme.status).toBe('completed');
    expect(acme.value).toEqual({
      url: `${site.url}/`,
      title: 'Acme Rockets — Rockets for everyone',
      description: 'Acme makes rockets, anvils and portable holes.',
      language: 'en-GB',
      socials: {
        linkedin: 'https://www.linkedin.com/company/acme-rockets',
        twitter: 'https://x.com/acmerockets',
        github: 'https://github.com/acme',
      },
      emails: ['sales@acme.example.com', 'press@acme.example.com', 'help@acme.example.com'],
      phones: ['+12025550143', '+33142685300'],
    });
    // Redirects are followed; the answer names the page that answered.
    expect(cellOf(rows, 'Name', 'Moved', 'Site')).toMatchObject({
      status: 'completed',
      value: { url: `${site.url}/`, title: 'Acme Rockets — Rockets for everyone' },
    });
    expect(cellOf(rows, 'Name', 'Gone', 'Site')).toMatchObject({ status: 'no_result' });
    expect(cellOf(rows, 'Name', 'Json', 'Site')).toMatchObject({ status: 'no_result', error: expect.stringContaining('not an HTML page') });
    // A site's failure is its own row's, not a reason to fail the whole batch.
    expect(cellOf(rows, 'Name', 'Broken', 'Site')).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
    expect(cellOf(rows, 'Name', 'Huge', 'Site')).toMatchObject({ status: 'error', error: expect.stringContaining('2097152 allowed') });
    expect(cellOf(rows, 'Name', 'Nowhere', 'Site')).toMatchObject({ status: 'error', error: expect.stringContaining('not a website URL') });
    expect(site.requestsTo('/')[0]?.headers.get('user-agent')).toContain('WorkflowServiceBot');
  });

  test('tech_stack detects technologies from HTML, scripts, meta tags and headers with the Wappalyzer fingerprints', async () => {
    const col = await addColumn(t, pid, 'Stack', 'tech_stack', { url: '{{Website}}' });
    const rows = await runColumns(t, pid, [col], 30_000);
    const acme = cellOf(rows, 'Name', 'Acme', 'Stack');
    expect(acme.status).toBe('completed');
    const byName = Object.fromEntries(acme.value.technologies.map((x: any) => [x.name, x]));
    expect(byName.WordPress).toMatchObject({ version: '6.4.2', categories: expect.arrayContaining(['CMS']) });
    expect(byName.Nginx).toMatchObject({ version: '1.25.3', categories: expect.arrayContaining(['Web servers']) });
    expect(byName.PHP).toMatchObject({ version: '8.2.1' });
    expect(byName.jQuery).toBeDefined();
    expect(acme.value.url).toBe(`${site.url}/`);
    expect(cellOf(rows, 'Name', 'Broken', 'Stack')).toMatchObject({ status: 'error', error: expect.stringContaining('HTTP 500') });
    expect(cellOf(rows, 'Name', 'Gone', 'Stack').status).toBe('no_result');
  }, 30_000);

  test('without ALLOW_PRIVATE_NETWORK the same loopback sites are refused, row by row', async () => {
    const restore = setEnv({ ALLOW_PRIVATE_NETWORK: undefined });
    try {
      // Another path than before: a cached answer (same cache key) would be reused without fetching.
      const col = await addColumn(t, pid, 'Closed', 'website_info', { url: '{{Website}}closed' });
      const before = site.requests.length;
      const rows = await runColumns(t, pid, [col]);
      expect(cellOf(rows, 'Name', 'Acme', 'Closed')).toMatchObject({
        status: 'error',
        error: expect.stringContaining('ALLOW_PRIVATE_NETWORK'),
      });
      expect(site.requests.length).toBe(before);
    } finally {
      restore();
    }
  });
});

describe('website tools: retryable failures', () => {
  let site: FakeServer;
  let restoreEnv: () => void;
  beforeAll(() => {
    restoreEnv = setEnv({ ALLOW_PRIVATE_NETWORK: '1' });
    site = fakeSite({ '/busy': () => new Response('slow down', { status: 429 }), '/down': () => new Response('', { status: 503 }) });
  });
  afterAll(() => {
    site.stop();
    restoreEnv();
  });

  test('429 and 5xx from a site are that row’s error, marked retryable; other rows go on', async () => {
    for (const tool of [websiteInfo, techStack]) {
      const rows = ['busy', 'down'].map((page) => ({ Page: `${site.url}/${page}` }));
      const results = await runTool(tool as typeof websiteInfo, rows, { url: '{{Page}}' }, { providerMode: 'live' });
      expect(results).toEqual([
        { status: 'error', error: expect.stringContaining('HTTP 429'), retryable: true },
        { status: 'error', error: expect.stringContaining('HTTP 503'), retryable: true },
      ]);
    }
  });

  test('a cache key per site page, so a later run may reuse the answer', () => {
    const key = (url: string) => websiteInfo.cacheKey?.({ rowId: '1', config: { url }, row: {} });
    expect(key('acme.com')).toBe(key('https://acme.com/'));
    expect(key('acme.com')).not.toBe(key('globex.com'));
    expect(key('not a url')).toBeNull();
  });
});
