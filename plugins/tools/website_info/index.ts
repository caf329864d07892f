import { defineTool, type EnrichResult, sandboxDomain, sandboxPhone, sandboxSlug, seededRandom, Type } from 'workflow-service/plugin-sdk';
import { fetchPage, siteUrl } from '../_web/fetch-page.ts';
import { extractSiteInfo, type SiteInfo } from './extract.ts';

/** Sandbox: a fake page about the company's example.com twin, the same every time. */
function sandboxInfo(input: string): SiteInfo {
  const slug = sandboxSlug(input);
  const domain = sandboxDomain(input);
  const name = slug.replace(/-/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());
  return {
    url: `https://${domain}/`,
    title: `${name} — sandbox home page`,
    description: `Sandbox data: a made-up description of ${name}.`,
    language: 'en',
    socials: {
      linkedin: `https://linkedin.example.com/company/${slug}`,
      twitter: `https://x.example.com/${slug.replace(/-/g, '_').slice(0, 15)}`,
    },
    emails: [`hello@${domain}`],
    phones: [sandboxPhone(seededRandom(`site:${slug}`))],
  };
}

export default defineTool({
  kind: 'tool',
  id: 'website_info',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'Website info',
  summary: "Reads a company's website: its title, description, email addresses, phones and social links.",
  description:
    'Fetches a company website (follows up to 5 redirects, 2 MB and 15 s at most) and reads off its title, meta description, language, social profile links (LinkedIn, X/Twitter, Facebook, Instagram, YouTube, GitHub, TikTok), email addresses and phone numbers. Config: {"url": "{{Website}}"} (a URL or a bare domain). Free (no provider fee). A site that is down gives that row an error; retry it later.',
  category: 'company',
  tags: ['website', 'scrape', 'social', 'linkedin', 'email', 'phone', 'contact'],
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
  produces: [
    { field: 'title', description: 'The page title.' },
    { field: 'description', description: 'The meta (or Open Graph) description.' },
    { field: 'socials', description: 'Profile URL by network: linkedin, twitter, facebook, instagram, youtube, github, tiktok.' },
    { field: 'emails', description: 'Addresses found in mailto links, JSON-LD and the visible text.' },
    { field: 'phones', description: 'Numbers from tel links and JSON-LD, in E.164 form when valid.' },
  ],
  cost: { credits: 0, per: 'result' },
  batchSize: 10,
  cacheKey: (item) => {
    const target = siteUrl(String(item.config.url));
    return target ? `website_info:${target.url.host}${target.url.pathname}` : null;
  },
  cacheTtlMs: 24 * 60 * 60 * 1000,
  concurrency: 5,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: sandboxInfo(String(item.config.url)) };
    const fetched = await fetchPage(ctx, String(item.config.url));
    if ('result' in fetched) return fetched.result;
    try {
      return { status: 'ok', value: extractSiteInfo(fetched.page.html, fetched.page.url) };
    } catch (e) {
      // A page that trips the parser is its own row's problem, not the others'.
      return { status: 'error', error: `could not read the page: ${(e as Error).message}`, retryable: false };
    }
  },
});
