import {
  defineTool,
  type EnrichResult,
  pick,
  SANDBOX_CITIES,
  SANDBOX_INDUSTRIES,
  sandboxDomain,
  sandboxSlug,
  seededRandom,
  type Static,
  Type,
} from 'workflow-service/plugin-sdk';
import { MATCH_RULE_FIELDS, matchRules, PDL_COMPANY_PROVIDER, pdlFailure, pdlGet } from '../../_providers/pdl/pdl-client.ts';

const Field = (description: string) => Type.Optional(Type.String({ maxLength: 500, description }));

const Input = Type.Object(
  {
    website: Field('The company’s website or domain; the surest match. Usually "{{Website}}" or "{{Domain}}".'),
    name: Field('The company name, when the website is unknown.'),
    profile: Field('The company’s LinkedIn URL.'),
    ...MATCH_RULE_FIELDS,
  },
  { additionalProperties: false, minProperties: 1, description: 'Give a website, a name or a LinkedIn URL.' },
);

type Config = Static<typeof Input>;

/** PDL's query for this row, or null when it names no company. */
export function companyQuery(config: Config): Record<string, string> | null {
  const q: Record<string, string> = {};
  for (const k of ['website', 'name', 'profile'] as const) {
    const v = config[k];
    const t = typeof v === 'string' ? v.trim() : '';
    if (t) q[k] = t;
  }
  return Object.keys(q).length ? { ...q, ...matchRules(config) } : null;
}

/** PDL's company record (fields at the top of its answer), the fields this tool reads. */
interface PdlCompany {
  id?: string;
  name?: string | null;
  display_name?: string | null;
  website?: string | null;
  industry?: string | null;
  size?: string | null;
  employee_count?: number | null;
  founded?: number | null;
  type?: string | null;
  ticker?: string | null;
  summary?: string | null;
  tags?: string[] | null;
  linkedin_url?: string | null;
  twitter_url?: string | null;
  facebook_url?: string | null;
  location?: { name?: string | null; country?: string | null } | null;
}

/** The company as a flat record; the same shape in live and sandbox mode. */
function flatten(c: PdlCompany, likelihood: number | null) {
  return {
    name: c.display_name ?? c.name ?? null,
    domain: c.website ?? null,
    industry: c.industry ?? null,
    employees: c.employee_count ?? null,
    size: c.size ?? null,
    founded: c.founded ?? null,
    type: c.type ?? null,
    ticker: c.ticker ?? null,
    summary: c.summary ?? null,
    tags: c.tags ?? [],
    location: c.location?.name ?? null,
    country: c.location?.country ?? null,
    linkedin_url: c.linkedin_url ?? null,
    twitter_url: c.twitter_url ?? null,
    facebook_url: c.facebook_url ?? null,
    likelihood,
    pdl_id: c.id ?? null,
  };
}

/** Sandbox twin: the same made-up company at the input's example.com twin every time. */
function sandboxCompany(q: Record<string, string>): PdlCompany {
  const input = q.website ?? q.name ?? q.profile ?? 'company';
  const rand = seededRandom(`pdl_company:${input.toLowerCase()}`);
  const slug = sandboxSlug(input);
  const employees = 10 + Math.floor(rand() * 2000);
  return {
    id: `sandbox-${slug}`,
    name: `${slug.replace(/-/g, ' ')} (sandbox)`,
    website: sandboxDomain(input),
    industry: pick(rand, SANDBOX_INDUSTRIES).toLowerCase(),
    employee_count: employees,
    size: employees > 1000 ? '1001-5000' : employees > 200 ? '201-500' : '11-50',
    founded: 1990 + Math.floor(rand() * 34),
    type: 'private',
    summary: `Sandbox data: a made-up company standing in for ${input}.`,
    tags: ['sandbox'],
    linkedin_url: `linkedin.example.com/company/${slug}`,
    location: { name: pick(rand, SANDBOX_CITIES), country: null },
  };
}

export default defineTool({
  kind: 'tool',
  id: 'pdl_company_enrich',
  version: '1.0.0',
  // enrichOne (SDK 1.1) and summary (SDK 1.2).
  sdk: '^1.2',
  name: 'Company enrichment (People Data Labs)',
  summary: 'Looks up a company in People Data Labs: industry, head count, size, founding year, location and profiles.',
  description:
    'Matches one company in People Data Labs (GET https://api.peopledatalabs.com/v5/company/enrich) from its website, name or LinkedIn URL, and answers its industry, employee count and size range, founding year, type, ticker, summary, tags, location, social profiles and PDL’s match likelihood (1–10). `min_likelihood` and `required` make weak or incomplete matches count as not found. Config: {"website": "{{Website}}"}. Live mode needs PDL_API_KEY (PDL_BASE_URL for a proxy). Costs 1 credit per company matched.',
  category: 'company',
  tags: ['company', 'firmographics', 'enrich', 'pdl', 'people data labs', 'industry', 'employees', 'waterfall'],
  legacyIds: [],
  input: Input,
  requires: [],
  produces: [
    { field: 'industry', description: 'Industry.' },
    { field: 'employees', description: 'Number of employees.' },
    { field: 'size', description: 'Head-count range, e.g. "51-200".' },
    { field: 'summary', description: 'What the company does.' },
  ],
  provider: PDL_COMPANY_PROVIDER,
  // PDL bills per match; a 404 is free.
  cost: { credits: 1, per: 'result' },
  batchSize: 25,
  concurrency: 5,
  cacheKey: (item) => {
    const q = companyQuery(item.config);
    return q ? `pdl_company_enrich:${JSON.stringify(q).toLowerCase()}` : null;
  },
  cacheTtlMs: 30 * 24 * 60 * 60 * 1000,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const q = companyQuery(item.config);
    if (!q) return { status: 'no_result', reason: 'give a website, a name or a LinkedIn URL' };
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: flatten(sandboxCompany(q), 8) };
    try {
      const answer = await pdlGet(ctx, 'company/enrich', q);
      if ('none' in answer) return { status: 'no_result', reason: answer.none };
      const { status: _status, likelihood, ...company } = answer.found as PdlCompany & { status?: number; likelihood?: number };
      return { status: 'ok', value: flatten(company, likelihood ?? null) };
    } catch (e) {
      return pdlFailure(e);
    }
  },
});
