import { type LoopbackProvider, startLoopbackProvider } from '../loopback-provider.ts';
import type { HunterFinding } from './hunter-client.ts';

/**
 * A loopback server speaking Hunter's GET /v2/email-finder, for tests: it knows `people` (matched on
 * domain, first and last name, case-insensitively) and one valid key. Answers as Hunter does: 401
 * with `{errors: [{id, code, details}]}` for a bad key, 400 for a missing parameter, 200 with
 * `data.email: null` when it has no address.
 */
export const HUNTER_TEST_KEY = 'hunter-test-key-0123';

export function startFakeHunter(people: HunterFinding[]): LoopbackProvider {
  const error = (status: number, id: string, details: string) => Response.json({ errors: [{ id, code: status, details }] }, { status });
  return startLoopbackProvider(({ path, query }) => {
    if (path !== '/v2/email-finder') return error(404, 'route_not_found', 'The route does not exist');
    if (query.get('api_key') !== HUNTER_TEST_KEY) return error(401, 'authentication_failed', 'No user found for the API key supplied');
    const domain = query.get('domain')?.toLowerCase();
    if (!domain && !query.get('company')) return error(400, 'wrong_params', 'You are missing the domain parameter');
    const [first, last] = [query.get('first_name'), query.get('last_name')].map((s) => s?.toLowerCase());
    const person = people.find((p) => p.domain === domain && p.first_name?.toLowerCase() === first && p.last_name?.toLowerCase() === last);
    const params = Object.fromEntries([...query].filter(([k]) => k !== 'api_key'));
    return Response.json({
      data: person ?? {
        first_name: first ?? null,
        last_name: last ?? null,
        email: null,
        score: null,
        domain,
        sources: [],
        verification: null,
      },
      meta: { params },
    });
  });
}
