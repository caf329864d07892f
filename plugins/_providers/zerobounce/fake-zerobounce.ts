import { type LoopbackProvider, startLoopbackProvider } from '../loopback-provider.ts';
import type { ZeroBounceValidation } from './zerobounce-client.ts';

/**
 * A loopback server speaking ZeroBounce's GET /v2/validate, for tests. `verdicts` maps an address
 * (lower case) to its status and sub-status; any other address is `invalid` / `mailbox_not_found`.
 * Answers as ZeroBounce does: HTTP 200 with `{error}` for a bad key, 400 without an email.
 */
export const ZEROBOUNCE_TEST_KEY = 'zerobounce-test-key-89ab';

export function startFakeZeroBounce(verdicts: Record<string, Pick<ZeroBounceValidation, 'status' | 'sub_status'>>): LoopbackProvider {
  return startLoopbackProvider(({ path, query }) => {
    if (path !== '/v2/validate') return Response.json({ error: 'Not found' }, { status: 404 });
    if (query.get('api_key') !== ZEROBOUNCE_TEST_KEY) return Response.json({ error: 'Invalid API key or your account ran out of credits' });
    const address = query.get('email')?.trim().toLowerCase();
    if (!address) return Response.json({ error: 'Missing parameter: email' }, { status: 400 });
    const [account, domain] = address.split('@');
    const verdict = verdicts[address] ?? { status: 'invalid', sub_status: 'mailbox_not_found' };
    return Response.json({
      address,
      ...verdict,
      sub_status: verdict.sub_status ?? '',
      free_email: 'false',
      did_you_mean: null,
      account,
      domain,
      domain_age_days: '9000',
      smtp_provider: 'google',
      mx_found: 'true',
      mx_record: `mx.${domain}`,
      firstname: null,
      lastname: null,
      gender: null,
      country: null,
      region: null,
      city: null,
      zipcode: null,
      processed_at: '2026-03-01 10:00:00.000',
    } satisfies ZeroBounceValidation & Record<string, unknown>);
  });
}
