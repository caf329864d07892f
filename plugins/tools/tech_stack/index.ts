import { defineTool, type EnrichResult, sandboxDomain, seededRandom, Type } from 'workflow-service/plugin-sdk';
import { fetchPage, siteUrl } from '../_web/fetch-page.ts';
import { detectTechnologies, SANDBOX_TECHNOLOGIES } from './detect.ts';

/** Sandbox: three to five well-known technologies, chosen by the domain, the same every time. */
function sandboxStack(input: string) {
  const domain = sandboxDomain(input);
  const rand = seededRandom(`tech:${domain}`);
  const pool = [...SANDBOX_TECHNOLOGIES];
  const picked = [];
  for (let n = 3 + Math.floor(rand() * 3); n > 0 && pool.length; n--) picked.push(...pool.splice(Math.floor(rand() * pool.length), 1));
  return { url: `https://${domain}/`, technologies: picked.map((t) => ({ ...t, confidence: 100 })) };
}

export default defineTool({
  kind: 'tool',
  id: 'tech_stack',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'Tech stack',
  summary: 'Finds the technologies a website is built with (its CMS, analytics, shop…).',
  description:
    'Detects the technologies a company website uses (CMS, frameworks, analytics, CDN, web server, e-commerce, marketing tools …) from its home page HTML, scripts, meta tags, cookies and response headers, with the open Wappalyzer fingerprints (webappanalyzer, ~7,500 technologies). Config: {"url": "{{Website}}"}. Free (no provider fee). A site that is down gives that row an error; retry it later.',
  category: 'company',
  tags: ['technology', 'technographics', 'wappalyzer', 'website', 'cms', 'stack'],
  legacyIds: [],
  input: Type.Object(
    {
      url: Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'The website, a URL or a domain; usually "{{Website}}" or "{{Domain}}".',
      }),
    },
    { additionalProperties: false },
  ),
  requires: ['url'],
  produces: [{ field: 'technologies', description: 'Detected technologies: name, version, confidence (0–100), categories, website.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 10,
  cacheKey: (item) => {
    const target = siteUrl(String(item.config.url));
    return target ? `tech_stack:${target.url.host}${target.url.pathname}` : null;
  },
  cacheTtlMs: 7 * 24 * 60 * 60 * 1000,
  concurrency: 5,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: sandboxStack(String(item.config.url)) };
    const fetched = await fetchPage(ctx, String(item.config.url));
    if ('result' in fetched) return fetched.result;
    let technologies: Awaited<ReturnType<typeof detectTechnologies>>;
    try {
      technologies = await detectTechnologies(fetched.page.url, fetched.page.html, fetched.page.headers);
    } catch (e) {
      // A page that trips the parser or the engine is its own row's problem, not the others'.
      return { status: 'error', error: `could not analyse the page: ${(e as Error).message}`, retryable: false };
    }
    if (technologies.length === 0) return { status: 'no_result', reason: 'no known technology detected' };
    return { status: 'ok', value: { url: fetched.page.url, technologies } };
  },
});
