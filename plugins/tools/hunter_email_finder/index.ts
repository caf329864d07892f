import { defineTool, type EnrichResult, rowFailure, type Static, Type } from 'workflow-service/plugin-sdk';
import { getDomain } from 'tldts';
import { HUNTER_PROVIDER, type HunterFinding, hunterGet } from '../../_providers/hunter/hunter-client.ts';
import { sandboxFinding } from './sandbox.ts';

const Name = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }));

const Input = Type.Object(
  {
    first_name: Name('Usually "{{First Name}}" (with last_name).'),
    last_name: Name('Usually "{{Last Name}}".'),
    full_name: Name('The whole name, instead of first_name + last_name.'),
    domain: Type.Optional(
      Type.String({ maxLength: 500, description: 'The company domain (a URL or an address works too); usually "{{Domain}}".' }),
    ),
    company: Type.Optional(Type.String({ maxLength: 200, description: 'The company name, when the domain is unknown (less accurate).' })),
    min_score: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 100,
        description:
          'Hunter’s confidence (0–100) an address needs to count as found; below it the row is "no result" (not charged) and a waterfall tries its next step.',
      }),
    ),
  },
  { additionalProperties: false, description: 'A name (first and last, or full) and a domain (or a company name).' },
);

type Config = Static<typeof Input>;

/** Hunter's query for this row (`api_key` is added by the client), or null when it lacks a name or a company. */
export function lookup(config: Config): Record<string, string> | null {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  const raw = text(config.domain).toLowerCase();
  // A URL or an address names the company by its registrable domain ("https://www.acme.co.uk/x" → "acme.co.uk").
  const domain = raw ? getDomain(raw.includes('@') && !raw.includes('/') ? raw.slice(raw.lastIndexOf('@') + 1) : raw) : null;
  const q: Record<string, string> = {};
  if (domain) q.domain = domain;
  else if (text(config.company)) q.company = text(config.company);
  else return null;
  const [first, last, full] = [text(config.first_name), text(config.last_name), text(config.full_name)];
  if (first && last) Object.assign(q, { first_name: first, last_name: last });
  else if (full) q.full_name = full;
  else return null;
  return q;
}

/** Hunter's finding as the cell's value: the same shape live and in sandbox mode. */
export function flatten(f: HunterFinding) {
  return {
    email: f.email ?? null,
    score: f.score ?? null,
    verification_status: f.verification?.status ?? null,
    verified_on: f.verification?.date ?? null,
    accept_all: f.accept_all ?? null,
    first_name: f.first_name ?? null,
    last_name: f.last_name ?? null,
    position: f.position ?? null,
    company: f.company ?? null,
    domain: f.domain ?? null,
    linkedin_url: f.linkedin_url ?? null,
    phone_number: f.phone_number ?? null,
    // Where Hunter saw the address; the first ten are enough to check it, and keep cells small.
    sources: (f.sources ?? []).slice(0, 10).map((s) => ({ uri: s.uri ?? null, last_seen_on: s.last_seen_on ?? null })),
    source_count: f.sources?.length ?? 0,
  };
}

export default defineTool({
  kind: 'tool',
  id: 'hunter_email_finder',
  version: '1.0.0',
  // enrichOne (SDK 1.1) and summary (SDK 1.2).
  sdk: '^1.2',
  name: 'Email finder (Hunter)',
  summary: 'Finds a person’s work email address from their name and company, with how sure the finder is and where it was seen.',
  description:
    'Finds a person’s work email with Hunter’s Email Finder (GET https://api.hunter.io/v2/email-finder) from a first and last name (or a full name) and the company domain (or its name), and answers the address, Hunter’s confidence score (0–100), its verification status (valid, accept_all, unknown), the person’s position and the pages where the address was seen. `min_score` makes low-confidence addresses count as not found, so a waterfall goes on. Config: {"first_name": "{{First Name}}", "last_name": "{{Last Name}}", "domain": "{{Domain}}", "min_score": 70}. Live mode needs HUNTER_API_KEY (HUNTER_BASE_URL for a proxy). Costs 1 credit per address found.',
  category: 'people',
  tags: ['email', 'finder', 'hunter', 'contact', 'work email', 'waterfall'],
  legacyIds: [],
  input: Input,
  // Either of two inputs will do (a domain or a company, two names or a full name): checked per row in enrichOne.
  requires: [],
  produces: [
    { field: 'email', description: 'The work address Hunter found.' },
    { field: 'score', description: 'Hunter’s confidence in it, 0–100.' },
    { field: 'verification_status', description: 'valid, accept_all or unknown, as Hunter last verified it.' },
  ],
  provider: HUNTER_PROVIDER,
  // Hunter charges a lookup only when it returns an address.
  cost: { credits: 1, per: 'result' },
  batchSize: 25,
  concurrency: 5,
  isValid: (value) => typeof (value as { email?: unknown } | null)?.email === 'string',
  cacheKey: (item) => {
    const q = lookup(item.config);
    // min_score is part of the key: a cached address found under a lower bar must not pass a higher one.
    return q ? `hunter_email_finder:${JSON.stringify(q).toLowerCase()}:${item.config.min_score ?? 0}` : null;
  },
  cacheTtlMs: 30 * 24 * 60 * 60 * 1000,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const q = lookup(item.config);
    if (!q) return { status: 'no_result', reason: 'give a first and last name (or full_name) and a domain (or company)' };
    let finding: HunterFinding;
    if (ctx.providerMode === 'sandbox') {
      const fake = sandboxFinding(q);
      if (!fake) return { status: 'no_result', reason: 'sandbox: Hunter has no address for this person' };
      finding = fake;
    } else {
      try {
        const answer = await hunterGet(ctx, 'email-finder', q);
        if ('none' in answer) return { status: 'no_result', reason: answer.none };
        finding = answer.found;
      } catch (e) {
        return rowFailure(e);
      }
    }
    if (!finding.email) return { status: 'no_result', reason: `Hunter found no address at ${q.domain ?? q.company}` };
    const min = item.config.min_score;
    if (min !== undefined && (finding.score ?? 0) < min)
      return { status: 'no_result', reason: `Hunter’s best guess ${finding.email} scores ${finding.score ?? 0}, under min_score ${min}` };
    return { status: 'ok', value: flatten(finding) };
  },
});
