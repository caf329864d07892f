import { Type } from 'workflow-service/plugin-sdk';

/**
 * The column → CRM field mapping shared by the CRM sync tools, and the upsert keys. Folders under
 * plugins/ whose name starts with `_` are shared code, never loaded as plugins.
 */

/** A CRM field's API name: HubSpot's internal property names (`annualrevenue`), Salesforce's field API names (`Domain__c`). */
export const FIELD_NAME = '^[A-Za-z][A-Za-z0-9_]{0,99}$';

/**
 * `fields`: CRM field → value. Values are `{{Column}}` templates (the host checks the columns exist
 * when the column is created, fills them per row and follows a column's rename), or fixed text.
 * Bare column names are not read as columns: the host could neither check them nor rename them.
 */
export function fieldMap(example: string) {
  return Type.Record(Type.String({ pattern: FIELD_NAME }), Type.String({ maxLength: 4000 }), {
    additionalProperties: false,
    maxProperties: 200,
    description: `CRM field (its API name) → value: a {{Column}} template, text around templates, or fixed text. E.g. ${example}.`,
  });
}

export const ClearEmpty = Type.Boolean({
  description:
    'Empty cells clear the CRM field (true) instead of leaving what the CRM holds (false, the default: an empty cell never erases data).',
});

/** A value the CRM accepts: scalars as they are, lists joined with `;` (multi-select / multi-picklist), objects as JSON text. */
export type CrmScalar = string | number | boolean | null;

const isEmpty = (v: unknown) =>
  v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && !v.length);

function scalar(v: unknown): CrmScalar {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x))).join(';');
  return JSON.stringify(v);
}

/**
 * The rendered mapping as CRM field values. Empty cells are left out, or sent as `cleared` (HubSpot
 * clears with "", Salesforce with null) when `clearEmpty`.
 */
export function mappedValues(
  fields: Record<string, unknown> | undefined,
  o: { clearEmpty: boolean; cleared: '' | null },
): Record<string, CrmScalar> {
  const out: Record<string, CrmScalar> = {};
  for (const [name, value] of Object.entries(fields ?? {})) {
    if (!isEmpty(value)) out[name] = scalar(value);
    else if (o.clearEmpty) out[name] = o.cleared;
  }
  return out;
}

/** HubSpot's API takes property values as text. */
export function asText(values: Record<string, CrmScalar>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/**
 * A company's domain from a domain, URL or email address: the host name in lower case without
 * `www.` ("https://www.Acme.com/about" → "acme.com"). Subdomains stay (eu.acme.com is its own
 * company, as HubSpot's domain property treats it). Null when there is no host name.
 */
export function domainKey(input: unknown): string | null {
  let text = String(input ?? '')
    .trim()
    .toLowerCase();
  if (text.includes('@') && !text.includes('/')) text = text.slice(text.lastIndexOf('@') + 1);
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(text) ? text : `http://${text}`).hostname;
  } catch {
    return null;
  }
  host = host.replace(/^www\./, '').replace(/\.$/, '');
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host) ? host : null;
}

/** An email address in lower case (how HubSpot and Salesforce compare them), or null when it is not one. */
export function emailKey(input: unknown): string | null {
  const text = String(input ?? '')
    .trim()
    .toLowerCase();
  return /^[^\s@"'\\]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(text) ? text : null;
}

/**
 * checkConfig problems of a mapping that names a field the key fills (`reserved`, compared without
 * case: Salesforce's API names ignore it): the key is the one place the matched value comes from,
 * so that the next run finds the same record.
 */
export function reservedFieldProblems(
  fields: Record<string, string> | undefined,
  reserved: string[],
  why: string,
): { path: string; message: string }[] {
  const taken = new Set(reserved.map((r) => r.toLowerCase()));
  return Object.keys(fields ?? {})
    .filter((name) => taken.has(name.toLowerCase()))
    .map((name) => ({ path: `fields.${name}`, message: `${name} ${why}; remove it from fields` }));
}
