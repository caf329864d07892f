import { defineTool, type EnrichResult, Type } from 'workflow-service/plugin-sdk';
import { mxLookups } from '../_email/mx-lookup.ts';
import { isDisposable, isRole, parseAddress } from './checks.ts';

export type Verdict = 'valid' | 'risky' | 'invalid';

/** What email_validator answers for an address. */
export interface Validation {
  email: string;
  verdict: Verdict;
  /** Why the verdict is not `valid`; null when it is. */
  reason: string | null;
  checks: {
    syntax: boolean;
    /** null when not checked (bad syntax or a disposable domain settles it first). */
    mx: boolean | null;
    disposable: boolean | null;
    role: boolean | null;
  };
  mx: string[];
}

export default defineTool({
  kind: 'tool',
  id: 'email_validator',
  version: '1.0.0',
  name: 'Email validator',
  summary: 'Checks whether an email address looks real and its domain accepts mail.',
  description:
    'Checks an email address and gives a verdict: `invalid` (bad syntax, a domain without mail servers by MX lookup, or a disposable/throwaway domain), `risky` (a role account such as info@, sales@, support@ rather than a person) or `valid`, with each check’s outcome. The mailbox itself is not probed (no SMTP). Config: {"email": "{{Email}}"}. Free.',
  category: 'people',
  tags: ['email', 'validate', 'verify', 'mx', 'disposable', 'role', 'deliverability'],
  legacyIds: [],
  input: Type.Object(
    { email: Type.String({ minLength: 1, maxLength: 320, description: 'The address; usually "{{Email}}".' }) },
    { additionalProperties: false },
  ),
  requires: ['email'],
  produces: [
    { field: 'email_verdict', description: 'valid | risky | invalid, with the reason and each check (syntax, mx, disposable, role).' },
  ],
  // The resolver to ask for MX records (tests and locked-down networks point it at their own).
  provider: { id: 'dns', requiredEnv: [], optionalEnv: ['DNS_SERVER'] },
  cost: { credits: 0, per: 'result' },
  batchSize: 50,
  // No isValid: the host treats an invalid value as "nothing found", and a verdict of `invalid` is a finding.
  async enrich(items, ctx) {
    const mxOf = mxLookups(ctx);
    return Promise.all(
      items.map(async (item): Promise<EnrichResult> => {
        const input = String(item.config.email).trim();
        const parsed = parseAddress(input);
        const v = (verdict: Verdict, reason: string | null, checks: Validation['checks'], servers: string[] = []): EnrichResult => ({
          status: 'ok',
          value: {
            email: 'local' in parsed ? `${parsed.local}@${parsed.domain}` : input,
            verdict,
            reason,
            checks,
            mx: servers,
          } satisfies Validation,
        });
        if ('problem' in parsed)
          return v('invalid', `bad syntax: ${parsed.problem}`, { syntax: false, mx: null, disposable: null, role: null });
        const role = isRole(parsed.local);
        if (isDisposable(parsed.domain)) return v('invalid', 'disposable email domain', { syntax: true, mx: null, disposable: true, role });
        const servers = await mxOf(parsed.domain);
        if (servers.kind === 'failed') return { status: 'error', error: servers.reason, retryable: true };
        if (servers.kind === 'none') return v('invalid', servers.reason, { syntax: true, mx: false, disposable: false, role });
        const checks = { syntax: true, mx: true, disposable: false, role };
        return role ? v('risky', 'role account, not a person', checks, servers.exchanges) : v('valid', null, checks, servers.exchanges);
      }),
    );
  },
});
