import { defineTool, exampleTwin, Type } from 'workflow-service/plugin-sdk';
import { getDomain } from 'tldts';

/**
 * The registrable domain of a URL, an email address or a host ("https://www.shop.example.co.uk/x" →
 * "example.co.uk"). Under the documentation domains (example.com, .net, .org), where sandbox data
 * keeps its made-up companies, each subdomain counts as one ("www.acme.example.com" → "acme.example.com").
 */
export function registrableDomain(input: string): string | null {
  let text = input.trim().toLowerCase();
  const at = text.lastIndexOf('@');
  if (at >= 0 && !text.includes('/')) text = text.slice(at + 1);
  return exampleTwin(text) ?? getDomain(text) ?? null;
}

export default defineTool({
  kind: 'tool',
  id: 'domain_normalizer',
  version: '1.0.0',
  name: 'Domain normalizer',
  summary: "Turns a web address or an email address into the company's domain, e.g. example.com.",
  description:
    'Turns a URL, an email address or a host name into its registrable domain (www.shop.example.co.uk → example.co.uk), using the public suffix list (under example.com, where sandbox data lives, each subdomain counts as one domain). Free, no provider. Config: {"value": "{{Website}}"}.',
  category: 'transform',
  tags: ['domain', 'url', 'normalize', 'website'],
  legacyIds: [],
  input: Type.Object(
    { value: Type.String({ description: 'A URL, email or host; usually "{{Website}}" or "{{Email}}".' }) },
    { additionalProperties: false },
  ),
  requires: ['value'],
  produces: [{ field: 'domain', description: 'Registrable domain, lower case.' }],
  cost: { credits: 0, per: 'result' },
  batchSize: 1000,
  async enrich(items) {
    return items.map((item) => {
      const domain = registrableDomain(String(item.config.value));
      return domain ? { status: 'ok' as const, value: domain } : { status: 'no_result' as const, reason: 'no registrable domain' };
    });
  },
});
