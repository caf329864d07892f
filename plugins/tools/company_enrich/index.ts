import {
  defineTool,
  type EnrichResult,
  pick,
  rowFailure,
  SANDBOX_CITIES,
  SANDBOX_INDUSTRIES,
  sandboxDomain,
  sandboxPhone,
  sandboxSlug,
  seededRandom,
  Type,
} from 'workflow-service/plugin-sdk';
import { getDomain } from 'tldts';
import { APOLLO_PROVIDER, apolloClient } from '../../_providers/apollo/apollo-client.ts';

interface ApolloOrganization {
  id?: string;
  name?: string;
  website_url?: string;
  primary_domain?: string;
  linkedin_url?: string;
  twitter_url?: string;
  facebook_url?: string;
  phone?: string;
  industry?: string;
  keywords?: string[];
  estimated_num_employees?: number;
  annual_revenue?: number;
  founded_year?: number;
  city?: string;
  state?: string;
  country?: string;
  short_description?: string;
  technology_names?: string[];
}

/** The company as a flat record; the same shape in live and sandbox mode. */
function flatten(o: ApolloOrganization, domain: string) {
  return {
    name: o.name ?? null,
    domain: o.primary_domain ?? domain,
    website: o.website_url ?? null,
    linkedin_url: o.linkedin_url ?? null,
    twitter_url: o.twitter_url ?? null,
    facebook_url: o.facebook_url ?? null,
    phone: o.phone ?? null,
    industry: o.industry ?? null,
    keywords: o.keywords ?? [],
    employees: o.estimated_num_employees ?? null,
    annual_revenue: o.annual_revenue ?? null,
    founded_year: o.founded_year ?? null,
    location: [o.city, o.state, o.country].filter(Boolean).join(', ') || null,
    country: o.country ?? null,
    description: o.short_description ?? null,
    technologies: o.technology_names ?? [],
    apollo_id: o.id ?? null,
  };
}

/** The registrable domain of a domain, URL or address; null when there is none. */
function companyDomain(input: unknown): string | null {
  const t = String(input ?? '')
    .trim()
    .toLowerCase();
  return getDomain(t.includes('@') && !t.includes('/') ? t.slice(t.lastIndexOf('@') + 1) : t) ?? null;
}

/** Sandbox: a made-up company at the domain's example.com twin, the same every time. */
function sandboxOrganization(domain: string): ApolloOrganization {
  const rand = seededRandom(`company:${domain}`);
  const slug = sandboxSlug(domain);
  const fake = sandboxDomain(domain);
  const name = `${slug.replace(/-/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase())} (sandbox)`;
  return {
    id: `sandbox-${slug}`,
    name,
    website_url: `https://${fake}`,
    primary_domain: fake,
    linkedin_url: `https://linkedin.example.com/company/${slug}`,
    phone: sandboxPhone(rand),
    industry: pick(rand, SANDBOX_INDUSTRIES),
    keywords: ['sandbox', 'example'],
    estimated_num_employees: 10 + Math.floor(rand() * 990),
    annual_revenue: 1_000_000 * (1 + Math.floor(rand() * 99)),
    founded_year: 1990 + Math.floor(rand() * 34),
    city: pick(rand, SANDBOX_CITIES),
    short_description: `Sandbox data: a made-up company standing in for ${domain}.`,
    technology_names: ['Nginx', 'Google Analytics'],
  };
}

export default defineTool({
  kind: 'tool',
  id: 'company_enrich',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'Company enrichment',
  summary: 'Looks up a company by its website: industry, size, revenue, location and more.',
  description:
    'Looks a company up by its domain in an Apollo-compatible company database (GET /api/v1/organizations/enrich) and answers its name, industry, employee count, revenue, founding year, location, description, keywords, technologies and social links. Config: {"domain": "{{Domain}}"} (a URL or an email works too). Live mode needs APOLLO_API_KEY. Costs 1 credit per company found.',
  category: 'company',
  tags: ['company', 'firmographics', 'enrich', 'apollo', 'industry', 'employees', 'revenue'],
  legacyIds: [],
  input: Type.Object(
    { domain: Type.String({ minLength: 1, maxLength: 500, description: 'The company domain; usually "{{Domain}}" or "{{Website}}".' }) },
    { additionalProperties: false },
  ),
  requires: ['domain'],
  produces: [
    { field: 'industry', description: 'Industry.' },
    { field: 'employees', description: 'Estimated number of employees.' },
    { field: 'annual_revenue', description: 'Annual revenue in USD.' },
    { field: 'description', description: 'Short description.' },
  ],
  // One request per batch, so that one token of the shared Apollo budget (the builders' too) is one request.
  provider: APOLLO_PROVIDER,
  cost: { credits: 1, per: 'result' },
  batchSize: 1,
  cacheKey: (item) => {
    const domain = companyDomain(item.config.domain);
    return domain ? `company_enrich:${domain}` : null;
  },
  cacheTtlMs: 30 * 24 * 60 * 60 * 1000,
  // Apollo answers one company per request and limits requests: one row at a time.
  concurrency: 1,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const domain = companyDomain(item.config.domain);
    if (!domain) return { status: 'error', error: `"${String(item.config.domain).slice(0, 200)}" is not a domain`, retryable: false };
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: flatten(sandboxOrganization(domain), domain) };
    try {
      const data = (await apolloClient(ctx).get('/api/v1/organizations/enrich', { domain })) as {
        organization?: ApolloOrganization | null;
      };
      const org = data.organization;
      return org && Object.keys(org).length
        ? { status: 'ok', value: flatten(org, domain) }
        : { status: 'no_result', reason: `no company found for ${domain}` };
    } catch (e) {
      return rowFailure(e);
    }
  },
});
