import { ProviderError } from 'workflow-service/plugin-sdk';
import type { CrmScalar } from '../../_crm/mapping.ts';
import type { SyncValue } from '../../_crm/sync-result.ts';
import type { Salesforce } from './salesforce-client.ts';

export type SObject = 'Account' | 'Contact' | 'Lead';

interface Upserted {
  id: string;
  created: boolean;
}

/** Several records match the key: the org's duplicates to merge, that row's error rather than a write to one at random. */
function several(object: SObject, what: string, ids: string[]): ProviderError {
  return new ProviderError(
    `${ids.length} ${object} records match ${what}${ids.length ? ` (${ids.join(', ')})` : ''}: merge them in Salesforce, or upsert by an external ID field (external_id_field)`,
    409,
    false,
  );
}

/**
 * By an External ID field: PATCH /sobjects/{SObject}/{field}/{value}. Salesforce matches and
 * creates (201) or updates (200; 204 before API 46.0, without the id) in one request, and the
 * field's uniqueness makes a duplicate impossible; 300 lists several matches.
 */
async function upsertByExternalId(
  sf: Salesforce,
  object: SObject,
  field: string,
  key: string,
  values: Record<string, CrmScalar>,
): Promise<Upserted> {
  const path = `/sobjects/${object}/${field}/${encodeURIComponent(key)}`;
  const { status, data } = await sf.send('PATCH', path, values);
  if (status === 300)
    throw several(
      object,
      `${field} = ${key}`,
      ((data as string[] | null) ?? []).map((url) => url.split('/').pop() ?? url),
    );
  if (status === 204) {
    const { data: record } = await sf.send('GET', `${path}?fields=Id`);
    return { id: (record as { Id: string }).Id, created: false };
  }
  const answer = data as { id: string; created?: boolean };
  return { id: answer.id, created: status === 201 || answer.created === true };
}

/** A SOQL string literal: backslashes and quotes escaped. */
const soql = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** How an Account's Website may hold a domain: with or without www., a scheme, a trailing slash. */
export function websiteForms(domain: string): string[] {
  const hosts = [domain, `www.${domain}`];
  return [...hosts, ...hosts.flatMap((h) => ['http', 'https'].flatMap((s) => [`${s}://${h}`, `${s}://${h}/`]))];
}

/**
 * Without an external ID field: a SOQL query on the match field (Website for accounts, Email for
 * contacts and leads; converted leads left out, Salesforce refuses to update them), then an update
 * of the record found or a create. The key is written to the match field on create; an update
 * leaves the value it was found by as it is (`https://www.acme.com/` stays).
 */
async function upsertByQuery(
  sf: Salesforce,
  object: SObject,
  match: { field: string; values: string[]; key: string },
  values: Record<string, CrmScalar>,
): Promise<Upserted> {
  const where = `${match.field} IN (${match.values.map(soql).join(', ')})${object === 'Lead' ? ' AND IsConverted = false' : ''}`;
  const query = `SELECT Id FROM ${object} WHERE ${where} ORDER BY CreatedDate LIMIT 3`;
  const { data } = await sf.send('GET', `/query?q=${encodeURIComponent(query)}`);
  const ids = ((data as { records?: { Id: string }[] }).records ?? []).map((r) => r.Id);
  if (ids.length > 1) throw several(object, `${match.field} ${match.values[0]}`, ids);
  if (ids[0]) {
    await sf.send('PATCH', `/sobjects/${object}/${ids[0]}`, values);
    return { id: ids[0], created: false };
  }
  const { data: made } = await sf.send('POST', `/sobjects/${object}`, { ...values, [match.field]: match.key });
  return { id: (made as { id: string }).id, created: true };
}

/** The field a record is matched on without an external ID field, and that the key fills. */
export const MATCH_FIELD: Record<SObject, string> = { Account: 'Website', Contact: 'Email', Lead: 'Email' };

/** Creates or updates the record of this key (an account's domain, a contact's or lead's email). */
export async function syncRecord(
  sf: Salesforce,
  object: SObject,
  key: string,
  mapped: Record<string, CrmScalar>,
  externalIdField: string | undefined,
): Promise<SyncValue> {
  const done = externalIdField
    ? await upsertByExternalId(sf, object, externalIdField, key, mapped)
    : await upsertByQuery(
        sf,
        object,
        { field: MATCH_FIELD[object], values: object === 'Account' ? websiteForms(key) : [key], key },
        mapped,
      );
  return {
    id: done.id,
    url: `${sf.instanceUrl()}/lightning/r/${object}/${done.id}/view`,
    action: done.created ? 'created' : 'updated',
  };
}
