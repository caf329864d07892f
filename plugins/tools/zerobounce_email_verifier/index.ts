import { defineTool, type EnrichResult, rowFailure, type Static, Type } from 'workflow-service/plugin-sdk';
import {
  ZEROBOUNCE_PROVIDER,
  ZEROBOUNCE_STATUSES,
  type ZeroBounceValidation,
  zeroBounceValidate,
} from '../../_providers/zerobounce/zerobounce-client.ts';
import { sandboxValidation } from './sandbox.ts';

const Input = Type.Object(
  {
    email: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'The address to check: "{{Email}}"; a finder column such as "{{Work Email}}" (the address it found is read from its result); or a guess built from the row, "{{First Name}}.{{Last Name}}@{{Domain}}".',
    }),
    ip_address: Type.Optional(Type.String({ maxLength: 64, description: 'The IP address the email was signed up from, when known.' })),
    accept: Type.Optional(
      Type.Array(Type.Union(ZEROBOUNCE_STATUSES.map((s) => Type.Literal(s))), {
        minItems: 1,
        uniqueItems: true,
        description:
          'The statuses that count as a result. Others end as "no result" with the status as the reason, so a waterfall goes on to its next step: ["valid"] stops a waterfall at the first deliverable address. Default: every status (a column of verdicts).',
      }),
    ),
  },
  { additionalProperties: false },
);

type Config = Static<typeof Input>;

/** The address in the rendered config: the text itself, or the `email` of a finder's result when the template named a finder column. */
export function addressOf(rendered: unknown): string | null {
  const value = rendered && typeof rendered === 'object' ? (rendered as { email?: unknown }).email : rendered;
  return typeof value === 'string' && value.trim() ? value.trim() : null;
}

const flag = (v: unknown): boolean | null => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : null);

/** ZeroBounce's verdict as the cell's value: the same shape live and in sandbox mode. */
export function flatten(v: ZeroBounceValidation, asked: string) {
  const age = Number(v.domain_age_days);
  return {
    status: v.status ?? 'unknown',
    email: v.address || asked,
    sub_status: v.sub_status || null,
    free_email: flag(v.free_email),
    did_you_mean: v.did_you_mean || null,
    domain: v.domain ?? null,
    mx_found: flag(v.mx_found),
    mx_record: v.mx_record || null,
    smtp_provider: v.smtp_provider || null,
    domain_age_days: v.domain_age_days == null || Number.isNaN(age) ? null : age,
    first_name: v.firstname ?? null,
    last_name: v.lastname ?? null,
    processed_at: v.processed_at ?? null,
  };
}

/** The verdict as this row's result: found, or "no result" naming the status when `accept` leaves it out. */
function verdict(v: ZeroBounceValidation, asked: string, accept: Config['accept']): EnrichResult {
  const value = flatten(v, asked);
  if (accept && !accept.includes(value.status)) {
    return { status: 'no_result', reason: `ZeroBounce says ${value.status}${value.sub_status ? ` (${value.sub_status})` : ''}` };
  }
  return { status: 'ok', value };
}

export default defineTool({
  kind: 'tool',
  id: 'zerobounce_email_verifier',
  version: '1.0.0',
  // enrichOne (SDK 1.1) and summary (SDK 1.2).
  sdk: '^1.2',
  name: 'Email verifier (ZeroBounce)',
  summary: 'Checks with ZeroBounce whether an email address can receive mail: valid, invalid, catch-all, unknown or risky.',
  description:
    'Verifies an email address with ZeroBounce (GET https://api.zerobounce.net/v2/validate), which probes the mail server, and answers its status (valid, invalid, catch-all, unknown, spamtrap, abuse, do_not_mail) with the sub-status (mailbox_not_found, role_based, disposable, …), a suggested correction, whether it is a free mailbox, and the domain’s MX and age. `email` may name a finder column ("{{Work Email}}") or build a guess ("{{First Name}}.{{Last Name}}@{{Domain}}"). With `"accept": ["valid"]` only deliverable addresses count as found: a waterfall step that stops at the first valid address. Config: {"email": "{{Email}}"}. Live mode needs ZEROBOUNCE_API_KEY (ZEROBOUNCE_BASE_URL=https://api-us.zerobounce.net for US processing). Costs 1 credit per address checked.',
  category: 'people',
  tags: ['email', 'verify', 'validate', 'verifier', 'zerobounce', 'deliverability', 'bounce', 'waterfall'],
  legacyIds: [],
  input: Input,
  requires: ['email'],
  produces: [
    { field: 'status', description: 'valid, invalid, catch-all, unknown, spamtrap, abuse or do_not_mail.' },
    { field: 'email', description: 'The address checked, as ZeroBounce normalised it.' },
    { field: 'sub_status', description: 'Why: mailbox_not_found, role_based, disposable, greylisted, …' },
  ],
  provider: ZEROBOUNCE_PROVIDER,
  // Every check is paid, whatever the verdict (a verdict `accept` leaves out included).
  cost: { credits: 1, per: 'attempt' },
  batchSize: 50,
  concurrency: 10,
  cacheKey: (item) => {
    const address = addressOf(item.config.email);
    // `accept` is in the key: a verdict cached for a column of every status must not pass a ["valid"] step.
    return address ? `zerobounce:${address.toLowerCase()}:${[...(item.config.accept ?? ZEROBOUNCE_STATUSES)].sort().join(',')}` : null;
  },
  cacheTtlMs: 7 * 24 * 60 * 60 * 1000,
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const address = addressOf(item.config.email);
    if (!address) return { status: 'no_result', reason: 'no address to check' };
    if (ctx.providerMode === 'sandbox') return verdict(sandboxValidation(address), address, item.config.accept);
    try {
      return verdict(await zeroBounceValidate(ctx, address, item.config.ip_address?.trim() ?? ''), address, item.config.accept);
    } catch (e) {
      return rowFailure(e);
    }
  },
});
