import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { type HTMLElement, parse } from 'node-html-parser';

/** What website_info reads off a home page. */
export interface SiteInfo {
  url: string;
  title: string | null;
  description: string | null;
  language: string | null;
  socials: Partial<Record<SocialNetwork, string>>;
  emails: string[];
  phones: string[];
}

export type SocialNetwork = 'linkedin' | 'twitter' | 'facebook' | 'instagram' | 'youtube' | 'github' | 'tiktok';

/** A profile link of each network; share buttons and intents are not the company's profile. */
const SOCIAL: [SocialNetwork, RegExp][] = [
  ['linkedin', /^(?:[\w-]+\.)?linkedin\.com\/(?:company|in|school|showcase)\/[^/?#]+/i],
  ['twitter', /^(?:www\.|mobile\.)?(?:twitter|x)\.com\/(?!intent\/|share|home\b|search\b|hashtag\/)[A-Za-z0-9_]{1,15}(?:[/?#]|$)/i],
  ['facebook', /^(?:[\w-]+\.)?facebook\.com\/(?!sharer|share|dialog\/|plugins\/|tr\b)[^?#]+/i],
  ['instagram', /^(?:www\.)?instagram\.com\/(?!p\/|explore\/)[^/?#]+/i],
  ['youtube', /^(?:(?:www|m)\.)?youtube\.com\/(?:@|c\/|channel\/|user\/)[^?#]+/i],
  ['github', /^(?:www\.)?github\.com\/[^/?#]+/i],
  ['tiktok', /^(?:www\.)?tiktok\.com\/@[^/?#]+/i],
];

const MAX_EMAILS = 20;
const MAX_PHONES = 10;
const EMAIL = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}/gi;
/** "logo@2x.png" looks like an address but is an image name. */
const FILE_SUFFIX = /\.(png|jpe?g|gif|svg|webp|avif|ico|css|js|json|woff2?)$/i;

/** decodeURIComponent that leaves malformed escapes as they are instead of throwing. */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function clean(text: string | undefined | null): string | null {
  const t = text?.replace(/\s+/g, ' ').trim();
  return t ? t.slice(0, 1000) : null;
}

function meta(root: HTMLElement, key: string): string | null {
  for (const m of root.querySelectorAll('meta')) {
    const name = (m.getAttribute('name') ?? m.getAttribute('property') ?? '').toLowerCase();
    if (name === key) return clean(m.getAttribute('content'));
  }
  return null;
}

function socialOf(href: string, base: string): [SocialNetwork, string] | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const rest = `${url.hostname}${url.pathname}`;
  for (const [network, re] of SOCIAL) {
    if (re.test(rest)) return [network, `https://${url.hostname}${url.pathname.replace(/\/+$/, '')}`];
  }
  return null;
}

function addEmail(into: Set<string>, raw: string): void {
  const email = raw.trim().toLowerCase();
  if (into.size < MAX_EMAILS && /^[^@\s]+@[^@\s]+\.[a-z]{2,24}$/.test(email) && !FILE_SUFFIX.test(email)) into.add(email);
}

function addPhone(into: Set<string>, raw: string): void {
  const text = raw.replace(/[^\d+()\-. ]/g, '').trim();
  if (into.size >= MAX_PHONES || text.replace(/\D/g, '').length < 6) return;
  const parsed = parsePhoneNumberFromString(text);
  into.add(parsed?.isValid() ? parsed.number : text);
}

/** Contact points a page states in its JSON-LD (schema.org Organization: telephone, email). */
function jsonLdContacts(root: HTMLElement, emails: Set<string>, phones: Set<string>): void {
  const walk = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, depth + 1);
      return;
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'telephone' && typeof v === 'string') addPhone(phones, v);
      else if (k === 'email' && typeof v === 'string') addEmail(emails, v.replace(/^mailto:/i, ''));
      else walk(v, depth + 1);
    }
  };
  for (const s of root.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      walk(JSON.parse(s.rawText), 0);
    } catch {
      // Broken JSON-LD is common; the rest of the page still counts.
    }
  }
}

/** Reads title, description, language, social profiles, emails and phones off an HTML page. */
export function extractSiteInfo(html: string, pageUrl: string): SiteInfo {
  const root = parse(html, { comment: false, blockTextElements: { script: true, style: false, noscript: false, pre: true } });
  const socials: SiteInfo['socials'] = {};
  const emails = new Set<string>();
  const phones = new Set<string>();
  for (const a of root.querySelectorAll('a[href]')) {
    const href = (a.getAttribute('href') ?? '').trim();
    if (/^mailto:/i.test(href)) {
      addEmail(emails, decode(href.slice(7).split('?')[0] ?? '').split(',')[0] ?? '');
    } else if (/^tel:/i.test(href)) {
      addPhone(phones, decode(href.slice(4)));
    } else {
      const social = socialOf(href, pageUrl);
      if (social && !socials[social[0]]) socials[social[0]] = social[1];
    }
  }
  jsonLdContacts(root, emails, phones);
  // Addresses in the visible text only: scripts and styles are full of look-alikes.
  for (const el of root.querySelectorAll('script,style,noscript,template')) el.remove();
  const body = root.querySelector('body') ?? root;
  for (const m of body.text.matchAll(EMAIL)) addEmail(emails, m[0]);
  return {
    url: pageUrl,
    title: clean(root.querySelector('title')?.text) ?? meta(root, 'og:title'),
    description: meta(root, 'description') ?? meta(root, 'og:description'),
    language: clean(root.querySelector('html')?.getAttribute('lang')),
    socials,
    emails: [...emails],
    phones: [...phones],
  };
}
