import { seededRandom } from 'workflow-service/plugin-sdk';
import { ZEROBOUNCE_STATUSES, type ZeroBounceStatus, type ZeroBounceValidation } from '../../_providers/zerobounce/zerobounce-client.ts';

/**
 * Sandbox twin of ZeroBounce's validation: the same address always gets the same verdict. An
 * address whose local part names a status (`valid@…`, `catch-all@…`, `do_not_mail@…`) gets that
 * status, so a test or a demo can force each one; an address without an `@` is `invalid`; others
 * are mostly valid (7 in 10), else catch-all, invalid or unknown.
 */
export function sandboxValidation(email: string): ZeroBounceValidation {
  const address = email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  const [account, domain] = at > 0 ? [address.slice(0, at), address.slice(at + 1)] : [address, ''];
  const named = ZEROBOUNCE_STATUSES.find((s) => s === account.replace('_', '-') || s === account);
  const roll = seededRandom(`zerobounce:${address}`)();
  const [status, sub_status]: [ZeroBounceStatus, string] = !domain
    ? ['invalid', 'failed_syntax_check']
    : named
      ? [named, '']
      : roll < 0.7
        ? ['valid', '']
        : roll < 0.85
          ? ['catch-all', '']
          : roll < 0.95
            ? ['invalid', 'mailbox_not_found']
            : ['unknown', 'greylisted'];
  return {
    address,
    status,
    sub_status,
    free_email: false,
    did_you_mean: null,
    account,
    domain: domain || null,
    domain_age_days: domain ? 3650 : null,
    smtp_provider: domain ? 'sandbox' : null,
    mx_found: Boolean(domain),
    mx_record: domain ? `mx.sandbox.example.com` : null,
    processed_at: '2026-01-01 00:00:00.000',
  };
}
