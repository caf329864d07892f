/**
 * Headers of every HTML page a person signs in to or works in (sign-in, the console, the consent
 * page): never cached, and never framed by another site, which could lay the page under a decoy
 * (clickjacking). Both headers, for browsers that know only one of them.
 */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'content-security-policy': "frame-ancestors 'none'",
} as const;
