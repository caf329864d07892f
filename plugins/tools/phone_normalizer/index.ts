import { defineTool, Type } from 'workflow-service/plugin-sdk';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

export default defineTool({
  kind: 'tool',
  id: 'phone_normalizer',
  version: '1.0.0',
  name: 'Phone normalizer',
  summary: 'Writes phone numbers in one international format and says where they are from.',
  description:
    'Parses a phone number and returns it in E.164 form (+33142685300) when it is a valid number; national numbers need default_country (ISO code, e.g. "FR"). Free, no provider. Config: {"phone": "{{Phone}}", "default_country": "US"}.',
  category: 'transform',
  tags: ['phone', 'normalize', 'e164'],
  legacyIds: [],
  input: Type.Object(
    {
      phone: Type.String({ description: 'The number; usually "{{Phone}}".' }),
      default_country: Type.Optional(
        Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166 alpha-2 country for national numbers.' }),
      ),
    },
    { additionalProperties: false },
  ),
  requires: ['phone'],
  produces: [{ field: 'phone_e164', description: 'The number in E.164 form.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 1000,
  async enrich(items) {
    return items.map((item) => {
      const country = item.config.default_country?.toUpperCase() as CountryCode | undefined;
      const parsed = parsePhoneNumberFromString(String(item.config.phone), country);
      if (!parsed?.isValid()) return { status: 'no_result' as const, reason: 'not a valid phone number' };
      return { status: 'ok' as const, value: parsed.number };
    });
  },
});
