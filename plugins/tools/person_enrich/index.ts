import {
  defineTool,
  type EnrichResult,
  pick,
  rowFailure,
  SANDBOX_CITIES,
  sandboxDomain,
  sandboxSlug,
  seededRandom,
  slugify,
  Type,
} from 'workflow-service/plugin-sdk';
import { APOLLO_PROVIDER, apolloClient, text } from '../../_providers/apollo/apollo-client.ts';

const Field = (description: string) => Type.Optional(Type.String({ maxLength: 500, description }));

const Input = Type.Object(
  {
    email: Field('Work email; the surest match. Usually "{{Email}}".'),
    linkedin_url: Field('LinkedIn profile URL.'),
    first_name: Field('First name (with last_name and domain or organization_name).'),
    last_name: Field('Last name.'),
    name: Field('Full name, instead of first_name + last_name.'),
    domain: Field('Employer domain, e.g. "{{Company Domain}}".'),
    organization_name: Field('Employer name, when the domain is unknown.'),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Give an email, a LinkedIn URL, or a name with a domain or organization name.',
  },
);

type Config = { [K in keyof typeof Input.properties]?: string };

/** The identifying fields present, or null when they cannot single a person out. */
function identity(config: Config): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(config)) {
    const t = text(v);
    if (t) out[k] = t;
  }
  const named = out.name || (out.first_name && out.last_name);
  return out.email || out.linkedin_url || (named && (out.domain || out.organization_name)) ? out : null;
}

interface ApolloPerson {
  id?: string;
  first_name?: string;
  last_name?: string;
  name?: string;
  title?: string;
  headline?: string;
  email?: string;
  email_status?: string;
  linkedin_url?: string;
  seniority?: string;
  departments?: string[];
  city?: string;
  state?: string;
  country?: string;
  organization?: { name?: string; primary_domain?: string; website_url?: string };
}

/** The person as a flat record; the same shape in live and sandbox mode. */
function flatten(p: ApolloPerson) {
  return {
    name: p.name ?? ([p.first_name, p.last_name].filter(Boolean).join(' ') || null),
    first_name: p.first_name ?? null,
    last_name: p.last_name ?? null,
    title: p.title ?? null,
    headline: p.headline ?? null,
    email: p.email ?? null,
    email_status: p.email_status ?? null,
    linkedin_url: p.linkedin_url ?? null,
    seniority: p.seniority ?? null,
    departments: p.departments ?? [],
    location: [p.city, p.state, p.country].filter(Boolean).join(', ') || null,
    company: p.organization?.name ?? null,
    company_domain: p.organization?.primary_domain ?? null,
    apollo_id: p.id ?? null,
  };
}

/** Sandbox: a made-up person at the company's example.com twin, the same for the same input. */
function sandboxPerson(id: Record<string, string>): ApolloPerson {
  const rand = seededRandom(`person:${JSON.stringify(id)}`);
  const [first = 'Ada', last = 'Lovelace'] = id.name
    ? id.name.split(/\s+/)
    : [id.first_name ?? id.email?.split(/[.@]/)[0] ?? 'Ada', id.last_name ?? 'Example'];
  const company = id.domain ?? id.organization_name ?? id.email ?? 'company';
  const domain = sandboxDomain(company);
  return {
    id: `sandbox-${slugify(`${first}-${last}-${sandboxSlug(company)}`)}`,
    first_name: first,
    last_name: last,
    name: `${first} ${last}`,
    title: pick(rand, ['Head of Sales', 'VP Marketing', 'CTO', 'Operations Manager'] as const),
    email: `${slugify(first).replace(/-/g, '')}.${slugify(last).replace(/-/g, '')}@${domain}`,
    email_status: 'verified',
    linkedin_url: `https://linkedin.example.com/in/${slugify(`${first}-${last}`)}`,
    seniority: pick(rand, ['head', 'vp', 'c_suite', 'manager'] as const),
    departments: ['sales'],
    city: pick(rand, SANDBOX_CITIES),
    organization: { name: `${sandboxSlug(company)} (sandbox)`, primary_domain: domain },
  };
}

export default defineTool({
  kind: 'tool',
  id: 'person_enrich',
  version: '1.0.0',
  // enrichOne and concurrency came with SDK 1.1.
  sdk: '^1.1',
  name: 'Person enrichment',
  summary: 'Looks up a person: job title, company, location and social profiles.',
  description:
    'Finds a person in an Apollo-compatible people database (POST /api/v1/people/match) from an email, a LinkedIn URL, or a name with the employer’s domain or name, and answers their title, seniority, work email and status, LinkedIn URL, location and employer. Config e.g. {"first_name": "{{First Name}}", "last_name": "{{Last Name}}", "domain": "{{Company Domain}}"}. Live mode needs APOLLO_API_KEY. Costs 1 credit per person found.',
  category: 'people',
  tags: ['person', 'people', 'enrich', 'apollo', 'title', 'email', 'linkedin'],
  legacyIds: [],
  input: Input,
  requires: [],
  produces: [
    { field: 'title', description: 'Job title.' },
    { field: 'email', description: 'Work email, with email_status.' },
    { field: 'linkedin_url', description: 'LinkedIn profile URL.' },
    { field: 'seniority', description: 'Seniority level.' },
  ],
  // One request per batch, so that one token of the shared Apollo budget (the builders' too) is one request.
  provider: APOLLO_PROVIDER,
  cost: { credits: 1, per: 'result' },
  batchSize: 1,
  cacheKey: (item) => {
    const id = identity(item.config as Config);
    if (!id) return null;
    const key = id.email ?? id.linkedin_url ?? [id.name ?? `${id.first_name} ${id.last_name}`, id.domain ?? id.organization_name].join('|');
    return `person_enrich:${key.toLowerCase()}`;
  },
  cacheTtlMs: 30 * 24 * 60 * 60 * 1000,
  // Apollo answers one person per request and limits requests: one row at a time.
  concurrency: 1,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const id = identity(item.config as Config);
    if (!id) return { status: 'no_result', reason: 'give an email, a LinkedIn URL, or a name with a domain or organization name' };
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: flatten(sandboxPerson(id)) };
    try {
      const data = (await apolloClient(ctx).post('/api/v1/people/match', {
        ...id,
        reveal_personal_emails: false,
        reveal_phone_number: false,
      })) as {
        person?: ApolloPerson | null;
      };
      return data.person ? { status: 'ok', value: flatten(data.person) } : { status: 'no_result', reason: 'no matching person' };
    } catch (e) {
      return rowFailure(e);
    }
  },
});
