import { type LoopbackProvider, startLoopbackProvider } from '../loopback-provider.ts';

/**
 * A loopback server speaking People Data Labs' GET /v5/person/enrich and /v5/company/enrich, for
 * tests. It knows `people` (PDL person records with a `likelihood`) and `companies` (company
 * records), and one key, read from X-Api-Key. Answers as PDL does: 200 `{status, likelihood, data}`
 * for a person and `{status, likelihood, …fields}` for a company, 404 `{status, error: {type,
 * message}}` when nothing matches (or the match is under `min_likelihood` or lacks a `required`
 * field), 401 for a bad key, 400 without an identifying parameter.
 */
export const PDL_TEST_KEY = 'pdl-test-key-4567';

type Rec = Record<string, unknown>;
const low = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : '');
const bare = (url: unknown) =>
  low(url)
    .replace(/^https?:\/\//, '')
    .replace(/^www\./, '')
    .replace(/\/.*$/, '');

const error = (status: number, type: string, message: string) => Response.json({ status, error: { type, message } }, { status });

function personMatch(people: Rec[], q: URLSearchParams): Rec | undefined {
  const email = low(q.get('email'));
  const profile = bare(q.get('profile'));
  const company = low(q.get('company'));
  const name = low(q.get('name')) || [q.get('first_name'), q.get('last_name')].map(low).join(' ');
  return people.find((p) => {
    if (email) return low(p.work_email) === email || (p.personal_emails as string[] | undefined)?.includes(email);
    if (profile) return bare(p.linkedin_url) === profile;
    const at = [low(p.job_company_name), bare(p.job_company_website)].includes(bare(company));
    return name.trim() !== '' && low(p.full_name) === name && at;
  });
}

function companyMatch(companies: Rec[], q: URLSearchParams): Rec | undefined {
  const website = bare(q.get('website'));
  const name = low(q.get('name'));
  const profile = bare(q.get('profile'));
  return companies.find(
    (c) => (website && bare(c.website) === website) || (name && low(c.name) === name) || (profile && bare(c.linkedin_url) === profile),
  );
}

/** Whether a record passes `min_likelihood` and every field `required` names (PDL's "a AND b" form). */
function passes(record: Rec, likelihood: number, q: URLSearchParams): boolean {
  if (Number(q.get('min_likelihood') ?? 0) > likelihood) return false;
  const required = (q.get('required') ?? '').split(/\s+AND\s+/).filter(Boolean);
  return required.every((f) => record[f.trim()] !== null && record[f.trim()] !== undefined);
}

export function startFakePdl(data: { people?: Rec[]; companies?: Rec[] }): LoopbackProvider {
  return startLoopbackProvider(({ path, query, headers }) => {
    if (headers.get('x-api-key') !== PDL_TEST_KEY) return error(401, 'invalid_auth', 'Invalid API Key');
    const isPerson = path === '/v5/person/enrich';
    if (!isPerson && path !== '/v5/company/enrich') return error(404, 'not_found', 'Not found');
    const keys = [...query.keys()].filter((k) => !['titlecase', 'min_likelihood', 'required', 'pretty'].includes(k));
    if (keys.length === 0) return error(400, 'invalid_request_error', 'Request object must contain at least one of the required fields');
    const found = isPerson ? personMatch(data.people ?? [], query) : companyMatch(data.companies ?? [], query);
    const { likelihood = 8, ...record } = found ?? {};
    if (!found || !passes(record, Number(likelihood), query)) return error(404, 'not_found', 'No records were found matching your request');
    return Response.json(isPerson ? { status: 200, likelihood, data: record } : { status: 200, likelihood, ...record });
  });
}
