import { BalanceOverflowError, MAX_BALANCE } from '../../core/credits/credit-types.ts';
import { isKnownPlan, planNames } from '../../core/plans.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { Flags } from './command.ts';

/** A mistake of the operator's: printed as {"error": ...} with exit code 1. */
export class UsageError extends Error {}

/** An answer printed as is (CSV) rather than as JSON. */
export class CsvText {
  constructor(readonly text: string) {}
}

export const csvField = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** A required flag left out: the answer adds the usage text. */
export class MissingFlag extends UsageError {}

export function need(values: Flags, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new MissingFlag(`--${name} is required`);
  return v;
}

/**
 * A whole number written in digits (an optional leading minus; no exponent, fraction, sign `+`,
 * hex or blanks), within [min, max] and a safe integer. `allowed` says what is accepted, for the error.
 */
export function wholeNumber(raw: string, name: string, min: number, max: number, allowed: string, exceptZero = false): number {
  const n = /^-?\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max || (exceptZero && n === 0)) {
    throw new UsageError(`--${name} must be ${allowed}, got "${raw}"`);
  }
  return n;
}

export const count = (raw: string, name: string) => wholeNumber(raw, name, 1, 1_000_000, 'a whole number from 1 to 1000000');
export const POSITIVE_CREDITS = `a whole number of credits from 1 to ${MAX_BALANCE}`;

/**
 * parseArgs takes `--amount=-5` but reads `--amount -5` as a missing value; numbers may be negative
 * here (credits:adjust), so a flag followed by a negative number is joined into the `=` form.
 */
export function joinNegativeValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (/^--[a-z-]+$/.test(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** A key's monthly cap: a positive whole number, or `none` to remove it. */
export function monthlyCap(raw: string): number | null {
  if (raw === 'none') return null;
  return wholeNumber(raw, 'monthly-credits', 1, MAX_BALANCE, `${POSITIVE_CREDITS}, or none`);
}

/** Grants, turning "past the largest balance" into the operator's error. */
export async function grantOrFail(storage: Storage, workspaceId: string, credits: number, note: string): Promise<number> {
  try {
    return await storage.credits.grant(workspaceId, credits, { note });
  } catch (e) {
    if (e instanceof BalanceOverflowError) throw new UsageError(`refused: ${e.message}`);
    throw e;
  }
}

export function plan(raw: string): string {
  if (!isKnownPlan(raw)) throw new UsageError(`--plan must be one of ${planNames().join(', ')}, got "${raw}"`);
  return raw;
}

export async function workspaceOrFail(storage: Storage, id: string) {
  const ws = await storage.workspaces.get(id);
  if (!ws) throw new UsageError(`no workspace ${id}`);
  return ws;
}

export const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
