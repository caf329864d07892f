/**
 * Reads a head-count or revenue figure as people type it in a spreadsheet: 250, "1,200",
 * "$12.5M", "2 billion", "10k+", "51-200", "1-5M". A range stands for its midpoint, so one number
 * can be compared with the ICP's min/max. Anything without a number is `null`.
 */
const SCALE: Record<string, number> = {
  k: 1e3,
  thousand: 1e3,
  m: 1e6,
  mm: 1e6,
  million: 1e6,
  b: 1e9,
  bn: 1e9,
  billion: 1e9,
  t: 1e12,
  trillion: 1e12,
};

const AMOUNT = /(\d+(?:\.\d+)?)\s*(k|thousand|mm|million|m|bn|billion|b|trillion|t)?\b/g;
const RANGE = /\d\s*[a-z]*\s*(-|–|to)\s*\$?\s*\d/;

export function parseQuantity(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  // "1,200,000" → "1200000": a comma between digit groups is a thousands separator.
  const text = value.toLowerCase().replace(/(\d),(?=\d{3}\b)/g, '$1');
  const amounts = [...text.matchAll(AMOUNT)].map((m) => ({ n: Number(m[1]), unit: m[2] }));
  const first = amounts[0];
  if (!first) return null;
  const second = amounts[1];
  if (second && RANGE.test(text)) {
    // In "1-5M" the unit written once applies to both ends.
    const unit = (u: string | undefined) => SCALE[u ?? second.unit ?? ''] ?? 1;
    return (first.n * unit(first.unit) + second.n * unit(second.unit)) / 2;
  }
  return first.n * (SCALE[first.unit ?? ''] ?? 1);
}
