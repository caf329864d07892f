import { defineTool, type EnrichResult, type Static, Type } from 'workflow-service/plugin-sdk';
import { MATCH_RULE_FIELDS, matchRules, PDL_PERSON_PROVIDER, type PdlPerson, pdlFailure, pdlGet } from '../../_providers/pdl/pdl-client.ts';
import { sandboxPerson } from './sandbox.ts';

const Field = (description: string) => Type.Optional(Type.String({ maxLength: 500, description }));

const Input = Type.Object(
  {
    email: Field('An address of the person; the surest match. Usually "{{Email}}".'),
    profile: Field('A social profile URL (LinkedIn, Twitter, GitHub…), e.g. "{{LinkedIn}}".'),
    first_name: Field('First name (with last_name and company or location).'),
    last_name: Field('Last name.'),
    name: Field('Full name, instead of first_name + last_name.'),
    company: Field('Employer name or website, e.g. "{{Company Domain}}".'),
    location: Field('Where the person lives or works ("Lyon, France"), when the company is unknown.'),
    ...MATCH_RULE_FIELDS,
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Give an email, a profile URL, or a name with a company or location.',
  },
);

type Config = Static<typeof Input>;

const IDENTITY = ['email', 'profile', 'first_name', 'last_name', 'name', 'company', 'location'] as const;

/** PDL's query for this row, or null when the config cannot single a person out (PDL would answer 400). */
export function personQuery(config: Config): Record<string, string> | null {
  const q: Record<string, string> = {};
  for (const k of IDENTITY) {
    const v = config[k];
    const t = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
    if (t) q[k] = t;
  }
  const named = q.name || (q.first_name && q.last_name);
  return q.email || q.profile || (named && (q.company || q.location)) ? { ...q, ...matchRules(config) } : null;
}

/** The person as a flat record; the same shape in live and sandbox mode. */
export function flatten(p: PdlPerson, likelihood: number | null) {
  return {
    email: typeof p.work_email === 'string' ? p.work_email : null,
    name: p.full_name ?? ([p.first_name, p.last_name].filter(Boolean).join(' ') || null),
    first_name: p.first_name ?? null,
    last_name: p.last_name ?? null,
    title: p.job_title ?? null,
    levels: p.job_title_levels ?? [],
    company: p.job_company_name ?? null,
    company_domain: p.job_company_website ?? null,
    linkedin_url: p.linkedin_url ?? null,
    location: p.location_name ?? null,
    likelihood,
    pdl_id: p.id ?? null,
  };
}

export default defineTool({
  kind: 'tool',
  id: 'pdl_person_enrich',
  version: '1.0.0',
  // enrichOne (SDK 1.1) and summary (SDK 1.2).
  sdk: '^1.2',
  name: 'Person enrichment (People Data Labs)',
  summary: 'Looks up a person in People Data Labs: work email, job title, employer, location and profile.',
  description:
    'Matches one person in People Data Labs (GET https://api.peopledatalabs.com/v5/person/enrich) from an email, a profile URL, or a name with a company or location, and answers their work email, title and levels, employer and its website, LinkedIn URL, location and PDL’s match likelihood (1–10). `required` (PDL’s syntax, e.g. "work_email") and `min_likelihood` make incomplete or weak matches count as not found, so an email waterfall moves on. Config: {"first_name": "{{First Name}}", "last_name": "{{Last Name}}", "company": "{{Company Domain}}", "required": "work_email"}. Live mode needs PDL_API_KEY (PDL_BASE_URL for a proxy). Costs 2 credits per person matched.',
  category: 'people',
  tags: ['person', 'people', 'enrich', 'pdl', 'people data labs', 'email', 'title', 'linkedin', 'waterfall'],
  legacyIds: [],
  input: Input,
  // Any of several inputs will do: checked per row in enrichOne.
  requires: [],
  produces: [
    { field: 'title', description: 'Job title.' },
    { field: 'email', description: 'Work email (null when PDL has none; require it with "required": "work_email").' },
    { field: 'linkedin_url', description: 'LinkedIn profile URL.' },
    { field: 'company', description: 'Current employer.' },
  ],
  provider: PDL_PERSON_PROVIDER,
  // PDL bills per match (a 404 is free), at several times a Hunter lookup.
  cost: { credits: 2, per: 'result' },
  batchSize: 25,
  concurrency: 5,
  cacheKey: (item) => {
    const q = personQuery(item.config);
    return q ? `pdl_person_enrich:${JSON.stringify(q).toLowerCase()}` : null;
  },
  cacheTtlMs: 30 * 24 * 60 * 60 * 1000,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const q = personQuery(item.config);
    if (!q) return { status: 'no_result', reason: 'give an email, a profile URL, or a name with a company or location' };
    if (ctx.providerMode === 'sandbox') {
      const fake = sandboxPerson(q);
      return fake
        ? { status: 'ok', value: flatten(fake.data, fake.likelihood) }
        : { status: 'no_result', reason: 'sandbox: no matching person' };
    }
    try {
      const answer = await pdlGet(ctx, 'person/enrich', q);
      if ('none' in answer) return { status: 'no_result', reason: answer.none };
      const { data, likelihood } = answer.found as { data?: PdlPerson; likelihood?: number };
      return data
        ? { status: 'ok', value: flatten(data, likelihood ?? null) }
        : { status: 'no_result', reason: 'PDL answered without data' };
    } catch (e) {
      return pdlFailure(e);
    }
  },
});
