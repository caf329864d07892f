import { getDomainWithoutSuffix } from 'tldts';

/**
 * Deterministic fake data for `PROVIDER_MODE=sandbox`: the same input always gives the same rows,
 * and every domain is under example.com so nobody mistakes it for real data.
 */
export function seededRandom(seed: string): () => number {
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  return mulberry32(h);
}

/** A small, fast PRNG (mulberry32) from a numeric seed: numbers in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

export function slugify(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'company'
  );
}

export const SANDBOX_CITIES = ['Berlin', 'Austin', 'Lyon', 'Toronto', 'Osaka', 'Porto', 'Denver', 'Utrecht'] as const;
export const SANDBOX_INDUSTRIES = ['Software', 'Logistics', 'Healthcare', 'Retail', 'Manufacturing', 'Fintech'] as const;
export const SANDBOX_FIRST = ['Ada', 'Linus', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken', 'Margaret'] as const;
export const SANDBOX_LAST = ['Lovelace', 'Torvalds', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Thompson', 'Hamilton'] as const;

/** Splits `total` into pages of at most `size` (a builder yields rows page by page). */
export function* pages(total: number, size: number): Generator<[start: number, end: number]> {
  for (let start = 0; start < total; start += size) yield [start, Math.min(total, start + size)];
}

/**
 * The sandbox stand-in for a company given by URL, domain, email or name: a slug of its main label
 * ("https://www.acme.co.uk/x" → "acme") and a domain under example.com, so enrichment tools in
 * sandbox mode answer about clearly fake sites.
 */
export function sandboxSlug(input: string): string {
  const text = input.trim().toLowerCase();
  const host = text.includes('@') && !text.includes('/') ? text.slice(text.lastIndexOf('@') + 1) : text;
  const twin = exampleTwin(host);
  if (twin) return slugify(twin.slice(0, -'.example.com'.length));
  return slugify((host.includes('.') && getDomainWithoutSuffix(host)) || text);
}

/**
 * The documentation domains (example.com, .net, .org; RFC 2606) hold the sandbox's made-up
 * companies, one per subdomain: `https://www.bellecour-dental.example.com/x` is the company
 * `bellecour-dental.example.com`, not example.com itself. Undefined for any other host.
 */
export function exampleTwin(urlOrHost: string): string | undefined {
  const host = urlOrHost
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[/?#:].*$/, '');
  const m = /(?:^|\.)([a-z0-9-]+)\.example\.(com|net|org)\.?$/.exec(host);
  if (!m || m[1] === 'www') return undefined;
  return `${m[1]}.example.${m[2]}`;
}

export function sandboxDomain(input: string): string {
  return `${sandboxSlug(input)}.example.com`;
}

/** A fake phone number in the 555-01xx range reserved for fiction. */
export function sandboxPhone(rand: () => number): string {
  return `+1555010${Math.floor(rand() * 100)
    .toString()
    .padStart(2, '0')}`;
}
