import type { IcpCriterion, IcpDefinition } from './definition.ts';
import { parseQuantity } from './quantity.ts';

/** What one criterion found in a row. */
export interface CriterionResult {
  criterion: IcpCriterion;
  weight: number;
  met: boolean;
  reason: string;
}

/** A row's fit: 0–100 (the weighted share of scored criteria met), or null when the ICP has no criteria. */
export interface IcpScore {
  score: number | null;
  reasons: CriterionResult[];
}

/**
 * How much each criterion counts, and the row columns it reads. Column names are compared
 * case-insensitively with spaces and punctuation ignored, so "Annual Revenue", "annual_revenue"
 * and "AnnualRevenue" are the same column.
 */
export const CRITERIA: Record<IcpCriterion, { weight: number; columns: string[] }> = {
  industries: { weight: 25, columns: ['Industry', 'Industries', 'Category', 'Sector'] },
  employee_range: { weight: 20, columns: ['Employees', 'Employee Count', 'Number of Employees', 'Headcount', 'Company Size'] },
  revenue_range: { weight: 20, columns: ['Revenue', 'Annual Revenue', 'Estimated Revenue'] },
  locations: { weight: 15, columns: ['Location', 'Country', 'City', 'State', 'Region', 'Address', 'Headquarters'] },
  keywords: { weight: 10, columns: ['Name', 'Company', 'Company Name', 'Description', 'Keywords', 'Tags'] },
  titles: { weight: 10, columns: ['Title', 'Job Title', 'Position'] },
};

const key = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

const text = (v: unknown): string =>
  v === null || v === undefined ? '' : Array.isArray(v) ? v.map(text).join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** The non-empty values of the criterion's columns in this row, as [column name, value]. */
function cellsFor(row: Record<string, unknown>, columns: string[]): [string, unknown][] {
  const wanted = new Set(columns.map(key));
  return Object.entries(row).filter(([name, v]) => wanted.has(key(name)) && text(v).trim() !== '');
}

/** A term matches as whole words, case-insensitively ("IT" does not match "digital"). */
function findTerm(haystack: string, terms: string[]): string | undefined {
  const lower = haystack.toLowerCase();
  return terms.find((t) => {
    const escaped = t
      .trim()
      .toLowerCase()
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return escaped !== '' && new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, 'u').test(lower);
  });
}

function termCriterion(criterion: IcpCriterion, terms: string[], row: Record<string, unknown>): Omit<CriterionResult, 'weight'> {
  const cells = cellsFor(row, CRITERIA[criterion].columns);
  if (cells.length === 0) return { criterion, met: false, reason: `no value in ${CRITERIA[criterion].columns.join('/')}` };
  for (const [name, v] of cells) {
    const hit = findTerm(text(v), terms);
    if (hit) return { criterion, met: true, reason: `${name} "${text(v)}" matches "${hit}"` };
  }
  const shown = cells.map(([name, v]) => `${name} "${text(v)}"`).join(', ');
  return { criterion, met: false, reason: `${shown} matches none of ${terms.map((t) => `"${t}"`).join(', ')}` };
}

function rangeCriterion(
  criterion: IcpCriterion,
  range: { min?: number; max?: number },
  row: Record<string, unknown>,
): Omit<CriterionResult, 'weight'> {
  const bounds = `${range.min ?? '…'}–${range.max ?? '…'}`;
  for (const [name, v] of cellsFor(row, CRITERIA[criterion].columns)) {
    const n = parseQuantity(v);
    if (n === null) continue;
    const met = (range.min === undefined || n >= range.min) && (range.max === undefined || n <= range.max);
    return { criterion, met, reason: `${name} "${text(v)}" (${n}) is ${met ? 'within' : 'outside'} ${bounds}` };
  }
  return { criterion, met: false, reason: `no number in ${CRITERIA[criterion].columns.join('/')}` };
}

/** Whether the ICP sets this criterion at all; criteria left out (or empty) are not scored. */
function isSet(def: IcpDefinition, c: IcpCriterion): boolean {
  const v = def[c];
  if (v === undefined) return false;
  if (Array.isArray(v)) return v.some((t) => t.trim() !== '');
  return v.min !== undefined || v.max !== undefined;
}

/** Scores one row (column name → value) against an ICP. Pure: the same inputs give the same score. */
export function scoreRow(def: IcpDefinition, row: Record<string, unknown>): IcpScore {
  const reasons: CriterionResult[] = [];
  for (const criterion of Object.keys(CRITERIA) as IcpCriterion[]) {
    if (!isSet(def, criterion)) continue;
    const v = def[criterion];
    const found = Array.isArray(v) ? termCriterion(criterion, v, row) : rangeCriterion(criterion, v as { min?: number; max?: number }, row);
    reasons.push({ ...found, weight: CRITERIA[criterion].weight });
  }
  if (reasons.length === 0) return { score: null, reasons };
  const total = reasons.reduce((s, r) => s + r.weight, 0);
  const met = reasons.reduce((s, r) => s + (r.met ? r.weight : 0), 0);
  return { score: Math.round((100 * met) / total), reasons };
}

/** True when the ICP has at least one criterion to score. */
export const hasCriteria = (def: IcpDefinition): boolean => (Object.keys(CRITERIA) as IcpCriterion[]).some((c) => isSet(def, c));
