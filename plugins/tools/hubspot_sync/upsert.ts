import { ProviderError } from 'workflow-service/plugin-sdk';
import type { SyncValue } from '../../_crm/sync-result.ts';
import type { HubSpot } from './hubspot-client.ts';

export type HubSpotObject = 'companies' | 'contacts';

/** HubSpot's object type ids, in record links. */
const TYPE_ID: Record<HubSpotObject, string> = { contacts: '0-1', companies: '0-2' };

interface Upserted {
  id: string;
  created: boolean;
}

interface UpsertAnswer {
  results?: { id?: string; new?: boolean }[];
  errors?: { message?: string }[];
}

/**
 * By a unique property (contacts: email; companies: the custom property named in id_property):
 * POST /crm/v3/objects/{objectType}/batch/upsert with one input. HubSpot matches and creates or
 * updates in one request, and its unique key makes a duplicate impossible.
 */
async function upsertByProperty(
  hs: HubSpot,
  object: HubSpotObject,
  idProperty: string,
  key: string,
  properties: Record<string, string>,
): Promise<Upserted> {
  const answer = (await hs.send('POST', `/crm/v3/objects/${object}/batch/upsert`, {
    inputs: [{ idProperty, id: key, properties }],
  })) as UpsertAnswer;
  const record = answer.results?.[0];
  if (!record?.id) {
    const why = answer.errors?.map((e) => e.message).join('; ') || 'no record in its answer';
    throw new ProviderError(`HubSpot did not upsert the ${object === 'contacts' ? 'contact' : 'company'}: ${why}`, 422, false);
  }
  return { id: record.id, created: record.new === true };
}

/**
 * Companies this process created by domain lately, per account: HubSpot's search index shows a new
 * company only after a few seconds, and a second row with the same domain in that time must update
 * it, not create another. Bounded and short-lived.
 */
const created = new Map<string, { id: string; at: number }>();
const REMEMBER_MS = 10 * 60_000;
const REMEMBER_MAX = 10_000;

function remembered(key: string): string | undefined {
  const hit = created.get(key);
  if (hit && Date.now() - hit.at < REMEMBER_MS) return hit.id;
  created.delete(key);
  return undefined;
}

function remember(key: string, id: string): void {
  if (created.size >= REMEMBER_MAX) created.delete(created.keys().next().value as string);
  created.set(key, { id, at: Date.now() });
}

interface SearchAnswer {
  total?: number;
  results?: { id: string }[];
}

/**
 * Companies by domain. HubSpot's domain is no unique property (batch upsert refuses it), so:
 * search by domain (with and without www.), update the one company found, or create one. Two
 * companies with the domain are the CRM's duplicates to merge: that row's error says so, rather
 * than writing to one of them at random. The domain is written when the company is created; an
 * update leaves the domain it was found by as it is (www. or not).
 */
async function upsertCompanyByDomain(hs: HubSpot, domain: string, properties: Record<string, string>): Promise<Upserted> {
  const found = (await hs.send('POST', '/crm/v3/objects/companies/search', {
    filterGroups: [{ filters: [{ propertyName: 'domain', operator: 'IN', values: [domain, `www.${domain}`] }] }],
    properties: ['domain'],
    limit: 3,
  })) as SearchAnswer;
  const ids = (found.results ?? []).map((r) => r.id);
  if (ids.length > 1) {
    throw new ProviderError(
      `${found.total ?? ids.length} companies in HubSpot have the domain ${domain} (ids ${ids.join(', ')}): merge them in HubSpot, or upsert by a unique property (id_property)`,
      409,
      false,
    );
  }
  const memo = `${hs.scope}:${domain}`;
  const id = ids[0] ?? remembered(memo);
  if (id) {
    try {
      await hs.send('PATCH', `/crm/v3/objects/companies/${id}`, { properties });
      return { id, created: false };
    } catch (e) {
      // A company remembered here but deleted or merged since: create it again below.
      if (!(e instanceof ProviderError && e.status === 404 && !ids[0])) throw e;
      created.delete(memo);
    }
  }
  const made = (await hs.send('POST', '/crm/v3/objects/companies', { properties: { ...properties, domain } })) as { id: string };
  remember(memo, made.id);
  return { id: made.id, created: true };
}

/**
 * Creates or updates the record of this key: contacts by email; companies by `idProperty` when
 * the config names one, else by domain. The key is written to its property too (by domain: on create).
 */
export async function syncRecord(
  hs: HubSpot,
  object: HubSpotObject,
  key: string,
  mapped: Record<string, string>,
  idProperty: string | undefined,
): Promise<SyncValue> {
  let done: Upserted;
  if (object === 'contacts') done = await upsertByProperty(hs, object, 'email', key, mapped);
  else if (idProperty) done = await upsertByProperty(hs, object, idProperty, key, { ...mapped, domain: key });
  else done = await upsertCompanyByDomain(hs, key, mapped);
  const account = await hs.account();
  return {
    id: done.id,
    url: `https://${account.uiDomain}/contacts/${account.portalId}/record/${TYPE_ID[object]}/${done.id}`,
    action: done.created ? 'created' : 'updated',
  };
}
