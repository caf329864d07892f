import { createHash } from 'node:crypto';
import { parse } from 'tldts';
import { foldCase, isEmptyValue } from './cell-values.ts';

/** An email address as people type it: one @, no spaces, a dot in the domain. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * One value of a unique key as the key compares it (docs/enrichment.md): text trimmed, its
 * blanks collapsed and case folded; an email lower-cased; a web address or a domain reduced to its
 * host, lower-case, without `www.` — so `ACME.com`, `https://WWW.acme.com/` and `acme.com?utm=x`
 * are one company, while `shop.acme.com` and `x.myshopify.com` stay apart. An address with a path
 * keeps it (lower-cased, without a trailing slash, query or fragment): `linkedin.com/in/jane-doe`
 * and `linkedin.com/in/john-smith` are two people, not one `linkedin.com`. Numbers and booleans as
 * written; anything else as JSON. Null for an empty value.
 */
export function keyValue(value: unknown): string | null {
  if (isEmptyValue(value)) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return JSON.stringify(value);
  const text = value.normalize('NFKC').trim().replace(/\s+/g, ' ');
  if (EMAIL.test(text)) return text.toLowerCase();
  if (!text.includes(' ')) {
    const url = parse(text, { allowPrivateDomains: true });
    // A web address (with its scheme), or a name under a public suffix: its host.
    const address = /^https?:\/\//i.test(text) || (url.domain !== null && url.isIcann !== false);
    if (url.hostname && address && !url.isIp) return url.hostname.toLowerCase().replace(/^www\./, '') + pathOf(text);
  }
  return foldCase(text);
}

/** The path of a web address as a key keeps it: '' for the site itself, else lower-case without trailing slashes. */
function pathOf(text: string): string {
  try {
    const path = new URL(/^https?:\/\//i.test(text) ? text : `http://${text}`).pathname.replace(/\/+$/, '');
    return path.toLowerCase();
  } catch {
    return '';
  }
}

/** The key of a row: the SHA-256 of its unique columns' values, in order; null when they are all empty (no key). */
export function rowKey(values: unknown[]): string | null {
  const parts = values.map(keyValue);
  if (parts.every((p) => p === null)) return null;
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
