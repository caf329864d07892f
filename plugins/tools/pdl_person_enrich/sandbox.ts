import { pick, SANDBOX_CITIES, sandboxDomain, sandboxSlug, seededRandom, slugify } from 'workflow-service/plugin-sdk';
import type { PdlPerson } from '../../_providers/pdl/pdl-client.ts';

/**
 * Sandbox twin of PDL's person match: the same query always gives the same made-up person at the
 * company's example.com twin; about one query in five matches nobody, and `required` and
 * `min_likelihood` are applied as PDL applies them, so waterfalls behave as they do live.
 */
export function sandboxPerson(q: Record<string, string>): { data: PdlPerson; likelihood: number } | null {
  const { min_likelihood, required, ...who } = q;
  const rand = seededRandom(`pdl_person:${JSON.stringify(who).toLowerCase()}`);
  if (rand() < 0.2) return null;
  const likelihood = 4 + Math.floor(rand() * 7);
  if (Number(min_likelihood ?? 0) > likelihood) return null;
  const [first = 'Ada', last = 'Example'] = who.name
    ? who.name.split(/\s+/)
    : [who.first_name ?? who.email?.split(/[.@]/)[0] ?? 'Ada', who.last_name ?? 'Example'];
  const company = who.company ?? who.email ?? who.profile ?? 'company';
  const domain = sandboxDomain(company);
  const part = (s: string) => slugify(s).replace(/-/g, '');
  // One person in four has no known work email, so that `required: "work_email"` has something to refuse.
  const data: PdlPerson = {
    id: `sandbox-${slugify(`${first}-${last}-${sandboxSlug(company)}`)}`,
    full_name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    job_title: pick(rand, ['Head of Sales', 'VP Marketing', 'CTO', 'Operations Manager'] as const),
    job_title_levels: [pick(rand, ['vp', 'director', 'manager', 'cxo'] as const)],
    job_company_name: `${sandboxSlug(company)} (sandbox)`,
    job_company_website: domain,
    linkedin_url: `linkedin.example.com/in/${slugify(`${first}-${last}`)}`,
    location_name: pick(rand, SANDBOX_CITIES),
    work_email: rand() < 0.25 ? null : `${part(first)}.${part(last)}@${domain}`,
  };
  const missing = (required ?? '')
    .split(/\s+AND\s+/)
    .filter(Boolean)
    .some((f) => (data as Record<string, unknown>)[f.trim()] == null);
  return missing ? null : { data, likelihood };
}
