import { pick, sandboxDomain, seededRandom, slugify } from 'workflow-service/plugin-sdk';
import type { HunterFinding } from '../../_providers/hunter/hunter-client.ts';

/**
 * Sandbox twin of Hunter's Email Finder: the same query always gives the same answer, under the
 * company's example.com twin, and about one person in five has no address, so that waterfalls
 * behave in sandbox mode as they do live (the next step gets its turn).
 */
export function sandboxFinding(q: Record<string, string>): HunterFinding | null {
  const rand = seededRandom(`hunter:${JSON.stringify(q).toLowerCase()}`);
  if (rand() < 0.2) return null;
  const [first = 'ada', last = 'example'] = q.first_name
    ? [q.first_name, q.last_name ?? '']
    : (q.full_name ?? '').split(/\s+/).filter(Boolean);
  const domain = sandboxDomain(q.domain ?? q.company ?? 'company');
  const part = (s: string) => slugify(s).replace(/-/g, '');
  return {
    first_name: first,
    last_name: last,
    email: `${part(first)}.${part(last)}@${domain}`,
    score: 50 + Math.floor(rand() * 50),
    domain,
    accept_all: false,
    position: pick(rand, ['Head of Sales', 'Marketing Manager', 'CTO', 'Founder'] as const),
    company: `${domain.split('.')[0]} (sandbox)`,
    linkedin_url: `https://linkedin.example.com/in/${slugify(`${first}-${last}`)}`,
    phone_number: null,
    sources: [{ domain, uri: `https://${domain}/team`, extracted_on: '2026-01-05', last_seen_on: '2026-03-01', still_on_page: true }],
    verification: { date: '2026-03-01', status: pick(rand, ['valid', 'valid', 'accept_all', 'unknown'] as const) },
  };
}
