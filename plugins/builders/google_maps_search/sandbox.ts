import { pick, SANDBOX_CITIES, seededRandom, slugify } from 'workflow-service/plugin-sdk';

/**
 * Sandbox places that read like the query ("dentists in Lyon" → "Bellecour Dental Studio, 14 Market
 * Street, Lyon", category "Dentist") and are still clearly made up: every site under example.com,
 * every phone in the 555-01xx range reserved for fiction. The same query gives the same places.
 */

const PLACE_WORDS = [
  'Riverside',
  'Central',
  'Old Town',
  'Parkview',
  'Harbor',
  'Maple',
  'Sunrise',
  'Bellecour',
  'Lakeside',
  'Hillcrest',
  'Garden',
  'Station',
  'Market',
  'Northgate',
  'Westbrook',
  'Saint-Jean',
];
const SURNAMES = ['Moreau', 'Fischer', 'Okafor', 'Tanaka', 'Silva', 'Novak', 'Larsen', 'Haddad', 'Kowalski', 'Bianchi', 'Dubois', 'Nguyen'];
const SUFFIXES = ['Studio', 'Center', 'Clinic', 'House', 'Group', 'Co.', 'Lab', 'Corner'];
const STREETS = [
  'Market Street',
  'Station Road',
  'Church Street',
  'Park Avenue',
  'High Street',
  'Mill Lane',
  'River Road',
  'Garden Row',
  'King Street',
  'Harbor Way',
];

const title = (s: string) => s.replace(/\b\p{L}/gu, (c) => c.toUpperCase());

/** "dentists in Lyon" → { what: "dentists", where: "Lyon" }; without "in", no place. */
export function parseQuery(query: string): { what: string; where: string | undefined } {
  const m = /^(.*?)\s+(?:in|near|around|à|in der|en)\s+(.+)$/iu.exec(query.trim());
  return m ? { what: (m[1] ?? '').trim() || query.trim(), where: title((m[2] ?? '').trim()) } : { what: query.trim(), where: undefined };
}

/** The kind of place, singular and capitalised: "dentists" → "Dentist", "coffee shops" → "Coffee Shop". */
export function placeKind(what: string): string {
  const words = what.split(/\s+/).filter(Boolean);
  const last = words.pop() ?? 'place';
  const singular = /ies$/i.test(last) ? `${last.slice(0, -3)}y` : /(?:ss|us)$/i.test(last) ? last : last.replace(/s$/i, '');
  return title([...words, singular].join(' ').toLowerCase());
}

export function sandboxPlace(query: string, i: number): Record<string, unknown> {
  const { what, where } = parseQuery(query);
  const kind = placeKind(what);
  const rand = seededRandom(`maps:${query}:${i}`);
  const shape = Math.floor(rand() * 4);
  const name =
    shape === 0
      ? `${pick(rand, PLACE_WORDS)} ${kind}`
      : shape === 1
        ? `${kind} ${pick(rand, SURNAMES)}`
        : shape === 2
          ? `${pick(rand, SURNAMES)} & ${pick(rand, SURNAMES)} ${kind}`
          : `${pick(rand, PLACE_WORDS)} ${kind} ${pick(rand, SUFFIXES)}`;
  // The row number keeps names (and sites) apart when the same words come up twice.
  const slug = `${slugify(name)}-${i + 1}`;
  const city = where ?? pick(rand, SANDBOX_CITIES);
  return {
    Name: name,
    Address: `${1 + Math.floor(rand() * 180)} ${pick(rand, STREETS)}, ${city}`,
    Phone: `+1 555 01${String(i % 100).padStart(2, '0')}`,
    Website: `https://www.${slug}.example.com`,
    Rating: Math.round((3.2 + rand() * 1.8) * 10) / 10,
    Reviews: Math.floor(rand() ** 2 * 900) + 3,
    Category: kind,
    'Google Maps URL': `https://maps.example.com/place/${slug}`,
  };
}
