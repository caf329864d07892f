import { createRequire } from 'node:module';

/**
 * The offline checks of an address: syntax, disposable domain, role account. The lists come from
 * npm packages that are kept up to date by others: disposable-email-domains (≈120,000 throwaway
 * domains, plus wildcard parents) and role-based-email-addresses (≈1,000 role prefixes such as
 * info, sales, support). They load on first use, not at start-up.
 */
const require = createRequire(import.meta.url);
let disposable: { exact: Set<string>; wildcard: Set<string> } | undefined;
let roles: Set<string> | undefined;

function disposableLists() {
  disposable ??= {
    exact: new Set(require('disposable-email-domains') as string[]),
    wildcard: new Set(require('disposable-email-domains/wildcard.json') as string[]),
  };
  return disposable;
}

/** Whether mail to this domain goes to a throwaway inbox service (a listed domain or a subdomain of a wildcard one). */
export function isDisposable(domain: string): boolean {
  const { exact, wildcard } = disposableLists();
  if (exact.has(domain)) return true;
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (wildcard.has(labels.slice(i).join('.'))) return true;
  return false;
}

/** Whether the mailbox names a role (info@, sales@, support@ …) rather than a person. */
export function isRole(local: string): boolean {
  roles ??= new Set((require('role-based-email-addresses') as string[]).map((r) => r.toLowerCase()));
  return roles.has(local.split('+')[0] as string);
}

/**
 * The address split and lower-cased when its syntax is one mail systems accept, else why not.
 * Deliberately stricter than RFC 5322 (no quoted local parts, no IP literals, no comments): what
 * a sales tool can mail, not what the grammar allows.
 */
export function parseAddress(input: string): { local: string; domain: string } | { problem: string } {
  const email = input.trim();
  if (email.length > 254) return { problem: 'longer than 254 characters' };
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1) return { problem: 'not of the form name@domain' };
  const local = email.slice(0, at);
  let domain = email.slice(at + 1).toLowerCase();
  if (local.length > 64) return { problem: 'the part before @ is longer than 64 characters' };
  if (!/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/.test(local))
    return { problem: 'the part before @ has characters or dots mail systems refuse' };
  try {
    domain = new URL(`http://${domain}`).hostname; // IDN → punycode
  } catch {
    return { problem: 'the domain is not a valid host name' };
  }
  const labels = domain.split('.');
  if (
    labels.length < 2 ||
    !labels.every((l) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(l)) ||
    !/^(xn--[a-z0-9-]+|[a-z]{2,63})$/.test(labels.at(-1) as string)
  ) {
    return { problem: 'the domain is not a valid host name' };
  }
  return { local: local.toLowerCase(), domain };
}
