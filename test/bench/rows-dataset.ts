import type { Cell, Column } from '../../core/model.ts';
import type { NewColumn } from '../../core/ports/storage.ts';
import { mulberry32, pick } from '../../core/plugins/sandbox-data.ts';

/**
 * The benchmark's synthetic companies: ten input columns, generated deterministically from the
 * row index (the same index always gives the same company), so any slice can be seeded on its own.
 */
export const BENCH_COLUMNS: NewColumn[] = [
  { name: 'name', type: 'input' },
  { name: 'domain', type: 'input' },
  { name: 'city', type: 'input' },
  { name: 'industry', type: 'input' },
  { name: 'employees', type: 'input' },
  { name: 'revenue', type: 'input' },
  { name: 'founded', type: 'input' },
  { name: 'rating', type: 'input' },
  { name: 'description', type: 'input' },
  { name: 'linkedin', type: 'input' }, // ~10% empty
];

/** One in ten names ends in this word, so a `contains` filter on it matches ~10% of rows. */
export const NAME_NEEDLE = 'Labs';

const FIRST = [
  'Acme',
  'Nordic',
  'Blue',
  'Silver',
  'Granite',
  'Bright',
  'Quantum',
  'Green',
  'Iron',
  'Crystal',
  'Summit',
  'Harbor',
  'Pioneer',
  'Vertex',
  'Atlas',
  'Cedar',
  'Falcon',
  'Maple',
  'Orbit',
  'Polar',
  'River',
  'Solar',
  'Titan',
  'Urban',
  'Vivid',
  'Willow',
  'Zenith',
  'Apex',
  'Beacon',
  'Cobalt',
];
const SUFFIX = ['Labs', 'Systems', 'Holdings', 'Group', 'Partners', 'Works', 'Dynamics', 'Ventures', 'Solutions', 'Industries'];
const CITIES = [
  'Berlin',
  'Paris',
  'London',
  'Madrid',
  'Rome',
  'Vienna',
  'Prague',
  'Warsaw',
  'Lisbon',
  'Dublin',
  'Amsterdam',
  'Brussels',
  'Zurich',
  'Geneva',
  'Munich',
  'Hamburg',
  'Milan',
  'Barcelona',
  'Lyon',
  'Oslo',
  'Stockholm',
  'Copenhagen',
  'Helsinki',
  'Tallinn',
  'Riga',
  'Vilnius',
  'Budapest',
  'Bucharest',
  'Sofia',
  'Athens',
  'New York',
  'Boston',
  'Chicago',
  'Austin',
  'Seattle',
  'Denver',
  'Miami',
  'Atlanta',
  'Toronto',
  'Montreal',
  'Vancouver',
  'Sydney',
  'Melbourne',
  'Tokyo',
  'Seoul',
  'Singapore',
  'Bangalore',
  'Dubai',
  'Sao Paulo',
  'Mexico City',
];
const INDUSTRIES = [
  'Software',
  'Fintech',
  'Healthcare',
  'Biotech',
  'Retail',
  'Logistics',
  'Energy',
  'Manufacturing',
  'Education',
  'Media',
  'Gaming',
  'Real Estate',
  'Insurance',
  'Telecom',
  'Automotive',
  'Agriculture',
  'Legal',
  'Travel',
  'Food',
  'Security',
];
const WORDS = ['cloud', 'data', 'platform', 'for', 'modern', 'teams', 'secure', 'fast', 'global', 'smart', 'retail', 'ops', 'ai', 'tools'];

/** The values of company number `i`, in BENCH_COLUMNS order. */
export function companyValues(i: number): unknown[] {
  const r = mulberry32(i * 2654435761);
  const first = pick(r, FIRST);
  const suffix = SUFFIX[i % SUFFIX.length] as string; // exactly 10% per suffix
  const name = `${first} ${suffix} ${i}`;
  const employees = Math.max(1, Math.round(Math.exp(r() * Math.log(100_000))));
  const revenue = Math.round(employees * (50_000 + r() * 250_000));
  let description = '';
  while (description.length < 36) description += `${description ? ' ' : ''}${pick(r, WORDS)}`;
  const linkedin = r() < 0.1 ? (r() < 0.5 ? null : '') : `https://linkedin.com/company/${first.toLowerCase()}-${i}`;
  return [
    name,
    `${first.toLowerCase()}${suffix.toLowerCase()}${i}.com`,
    pick(r, CITIES),
    pick(r, INDUSTRIES),
    employees,
    revenue,
    1900 + Math.floor(r() * 125),
    Math.round((1 + r() * 4) * 10) / 10,
    description,
    linkedin,
  ];
}

const INDEX = new Map(BENCH_COLUMNS.map((c, k) => [c.name, k]));
const benchValue = (values: unknown[], column: Column): unknown => values[INDEX.get(column.name) ?? -1] ?? null;

export function companyCells(columns: Column[], i: number): Record<number, Cell> {
  const values = companyValues(i);
  const cells: Record<number, Cell> = {};
  for (const c of columns) cells[c.no] = { v: benchValue(values, c) };
  return cells;
}

/** The same company as a POST /rows body: column name to value. */
export function companyBody(columns: Column[], i: number): { company: Record<string, unknown> } {
  const values = companyValues(i);
  const company: Record<string, unknown> = {};
  for (const c of columns) company[c.name] = benchValue(values, c);
  return { company };
}
