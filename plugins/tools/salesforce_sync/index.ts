import { defineTool, type EnrichResult, type Static, Type } from 'workflow-service/plugin-sdk';
import { oneAtATime } from '../../_crm/key-lock.ts';
import { ClearEmpty, domainKey, emailKey, FIELD_NAME, fieldMap, mappedValues, reservedFieldProblems } from '../../_crm/mapping.ts';
import { sandboxSync, seededChars } from '../../_crm/sandbox.ts';
import { SYNC_PRODUCES, syncFailure } from '../../_crm/sync-result.ts';
import { salesforce } from './salesforce-client.ts';
import { SALESFORCE_PROVIDER } from './salesforce-session.ts';
import { MATCH_FIELD, type SObject, syncRecord } from './upsert.ts';

const Input = Type.Object(
  {
    object: Type.Union([Type.Literal('Account'), Type.Literal('Contact'), Type.Literal('Lead')], {
      description: 'The Salesforce object each row becomes: Account (keyed by domain), Contact or Lead (keyed by email).',
    }),
    key: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'The upsert key: the company’s domain (a URL or an email address works too) for Account, the email address for Contact and Lead. Usually "{{Domain}}" or "{{Email}}".',
    }),
    fields: Type.Optional(fieldMap('{"Name": "{{Name}}", "Industry": "{{Industry}}", "NumberOfEmployees": "{{Employees}}"}')),
    external_id_field: Type.Optional(
      Type.String({
        pattern: FIELD_NAME,
        description:
          'An External ID field of the object holding the key (e.g. Domain__c): records are then upserted by it in one request. Default: a query on Website (Account) or Email (Contact, Lead), then an update or a create.',
      }),
    ),
    clear_empty: Type.Optional(ClearEmpty),
  },
  { additionalProperties: false },
);

type Config = Static<typeof Input>;

function checkConfig(c: Config): { path: string; message: string }[] {
  if (c.external_id_field?.toLowerCase() === 'id')
    return [{ path: 'external_id_field', message: 'Id is Salesforce’s own record id, not the domain or email: name an External ID field' }];
  if (c.external_id_field)
    return reservedFieldProblems(
      c.fields,
      [c.external_id_field],
      'is the external ID field, filled from key (Salesforce refuses it in the body)',
    );
  return reservedFieldProblems(c.fields, [MATCH_FIELD[c.object]], `is filled from key (${c.object} records are matched on it)`);
}

/** Sandbox record: an 18-character id with the object's key prefix, a Lightning link under example.com. */
function sandboxRecord(object: SObject) {
  const prefix = { Account: '001', Contact: '003', Lead: '00Q' }[object];
  return (seed: string) => {
    const id = `${prefix}SBX${seededChars(seed, 12)}`;
    return { id, url: `https://sandbox.my.salesforce.example.com/lightning/r/${object}/${id}/view` };
  };
}

export default defineTool({
  kind: 'tool',
  id: 'salesforce_sync',
  version: '1.0.0',
  // enrichOne came with SDK 1.1, summary with 1.2.
  sdk: '^1.2',
  name: 'Salesforce sync',
  summary: 'Creates or updates each row’s account, contact or lead in Salesforce, and links the row to that record.',
  description:
    'Pushes each row into Salesforce: creates or updates the Account (matched by domain) or the Contact or Lead (matched by email), so running it again updates the same record and never makes a duplicate. Matching goes through an External ID field when you name one (external_id_field, one upsert request), else a query on Website or Email. Config: {"object": "Account", "key": "{{Domain}}", "fields": {"Name": "{{Name}}", "Industry": "{{Industry}}"}} (fields: Salesforce field API names ← {{Column}} templates). The cell holds {url, id, action: "created" | "updated"}. Empty cells leave Salesforce’s value unless clear_empty. Live mode needs SALESFORCE_INSTANCE_URL and SALESFORCE_ACCESS_TOKEN (or SALESFORCE_REFRESH_TOKEN with SALESFORCE_CLIENT_ID to renew it). Free (you use your org’s API allowance).',
  category: 'integration',
  tags: ['crm', 'salesforce', 'sync', 'upsert', 'export', 'push', 'accounts', 'contacts', 'leads'],
  legacyIds: [],
  input: Input,
  requires: ['key'],
  produces: SYNC_PRODUCES,
  provider: SALESFORCE_PROVIDER,
  cost: { credits: 0, per: 'attempt' },
  batchSize: 10,
  concurrency: 5,
  checkConfig,
  // No cacheKey: a write is never served from a cache.
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const c = item.config;
    const key = c.object === 'Account' ? domainKey(c.key) : emailKey(c.key);
    if (!key) {
      const what = c.object === 'Account' ? 'a domain' : 'an email address';
      return { status: 'error', error: `key "${String(c.key).slice(0, 200)}" is not ${what}`, retryable: false };
    }
    const values = mappedValues(c.fields, { clearEmpty: c.clear_empty === true, cleared: null });
    if (ctx.providerMode === 'sandbox')
      return { status: 'ok', value: sandboxSync(`salesforce:${c.object}:${key}`, sandboxRecord(c.object)) };
    // Outside the try: missing credentials or a refused renewal fail every row, naming the variables.
    const sf = await salesforce(ctx);
    try {
      const value = await oneAtATime(`salesforce:${sf.scope}:${c.object}:${key}`, () =>
        syncRecord(sf, c.object, key, values, c.external_id_field),
      );
      return { status: 'ok', value };
    } catch (e) {
      return syncFailure(e);
    }
  },
});
