import { defineTool, type EnrichResult, type Static, Type } from 'workflow-service/plugin-sdk';
import { oneAtATime } from '../../_crm/key-lock.ts';
import { asText, ClearEmpty, domainKey, emailKey, FIELD_NAME, fieldMap, mappedValues, reservedFieldProblems } from '../../_crm/mapping.ts';
import { sandboxSync, seededChars } from '../../_crm/sandbox.ts';
import { SYNC_PRODUCES, syncFailure } from '../../_crm/sync-result.ts';
import { HUBSPOT_PROVIDER, hubspot } from './hubspot-client.ts';
import { type HubSpotObject, syncRecord } from './upsert.ts';

const Input = Type.Object(
  {
    object: Type.Union([Type.Literal('companies'), Type.Literal('contacts')], {
      description: 'The HubSpot object each row becomes: companies (keyed by domain) or contacts (keyed by email).',
    }),
    key: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'The upsert key: the company’s domain (a URL or an email address works too) for companies, the email address for contacts. Usually "{{Domain}}" or "{{Email}}".',
    }),
    fields: Type.Optional(fieldMap('{"name": "{{Name}}", "industry": "{{Industry}}", "numberofemployees": "{{Employees}}"}')),
    id_property: Type.Optional(
      Type.String({
        pattern: FIELD_NAME,
        description:
          'Companies only: a custom HubSpot company property with unique values that holds the domain; companies are then upserted by it in one request. Default: found by searching the domain property.',
      }),
    ),
    clear_empty: Type.Optional(ClearEmpty),
  },
  { additionalProperties: false },
);

type Config = Static<typeof Input>;

function checkConfig(c: Config): { path: string; message: string }[] {
  if (c.object === 'contacts') {
    const problems = reservedFieldProblems(c.fields, ['email'], 'is filled from key (contacts are matched by email)');
    if (c.id_property)
      problems.push({ path: 'id_property', message: 'contacts are always matched by email; id_property is for companies' });
    return problems;
  }
  if (c.id_property?.toLowerCase() === 'domain')
    return [
      { path: 'id_property', message: 'domain is not a unique property in HubSpot: leave id_property out to match companies by domain' },
    ];
  return reservedFieldProblems(
    c.fields,
    ['domain', ...(c.id_property ? [c.id_property] : [])],
    'is filled from key (the company’s domain)',
  );
}

/** Sandbox record: a HubSpot-like numeric id from the key, a link under example.com. */
function sandboxRecord(object: HubSpotObject) {
  return (seed: string) => {
    const id = `${seededChars(seed, 1, '123456789')}${seededChars(`${seed}:id`, 10, '0123456789')}`;
    return { id, url: `https://app.hubspot.example.com/contacts/sandbox/record/${object === 'contacts' ? '0-1' : '0-2'}/${id}` };
  };
}

export default defineTool({
  kind: 'tool',
  id: 'hubspot_sync',
  version: '1.0.0',
  // enrichOne came with SDK 1.1, summary with 1.2.
  sdk: '^1.2',
  name: 'HubSpot sync',
  summary: 'Creates or updates each row’s company or contact in HubSpot, and links the row to that record.',
  description:
    'Pushes each row into HubSpot CRM: creates or updates the company (matched by domain) or the contact (matched by email), so running it again updates the same record and never makes a duplicate. Config: {"object": "companies", "key": "{{Domain}}", "fields": {"name": "{{Name}}", "industry": "{{Industry}}"}} (fields: HubSpot property internal names ← {{Column}} templates). The cell holds {url, id, action: "created" | "updated"}. Empty cells leave HubSpot’s value unless clear_empty. Live mode needs HUBSPOT_ACCESS_TOKEN (a private app token with the crm.objects companies/contacts read and write scopes). Free (you use your HubSpot API allowance).',
  category: 'integration',
  tags: ['crm', 'hubspot', 'sync', 'upsert', 'export', 'push', 'companies', 'contacts'],
  legacyIds: [],
  input: Input,
  requires: ['key'],
  produces: SYNC_PRODUCES,
  provider: HUBSPOT_PROVIDER,
  cost: { credits: 0, per: 'attempt' },
  batchSize: 10,
  concurrency: 4,
  checkConfig,
  // No cacheKey: a write is never served from a cache.
  async enrichOne(item, ctx): Promise<EnrichResult> {
    const c = item.config;
    const key = c.object === 'contacts' ? emailKey(c.key) : domainKey(c.key);
    if (!key) {
      const what = c.object === 'contacts' ? 'an email address' : 'a domain';
      return { status: 'error', error: `key "${String(c.key).slice(0, 200)}" is not ${what}`, retryable: false };
    }
    const properties = asText(mappedValues(c.fields, { clearEmpty: c.clear_empty === true, cleared: '' }));
    if (ctx.providerMode === 'sandbox') return { status: 'ok', value: sandboxSync(`hubspot:${c.object}:${key}`, sandboxRecord(c.object)) };
    // Outside the try: a missing token fails every row, naming the variable.
    const hs = hubspot(ctx);
    try {
      const value = await oneAtATime(`hubspot:${hs.scope}:${c.object}:${key}`, () =>
        syncRecord(hs, c.object, key, properties, c.id_property),
      );
      return { status: 'ok', value };
    } catch (e) {
      return syncFailure(e);
    }
  },
});
