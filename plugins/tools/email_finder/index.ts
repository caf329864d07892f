import { defineTool, type EnrichResult, Type } from 'workflow-service/plugin-sdk';
import { getDomain } from 'tldts';
import { mxLookups } from '../_email/mx-lookup.ts';
import { candidates, mailboxPart, PATTERNS } from './patterns.ts';

/** The mail domain of a domain, URL or address ("https://www.acme.co.uk/x" → "acme.co.uk"). */
function mailDomain(input: string): string | null {
  const text = input.trim().toLowerCase();
  return getDomain(text.includes('@') && !text.includes('/') ? text.slice(text.lastIndexOf('@') + 1) : text) ?? null;
}

export default defineTool({
  kind: 'tool',
  id: 'email_finder',
  version: '1.0.0',
  name: 'Email finder',
  summary: "Guesses a person's work email address from their name and company domain.",
  description:
    'Guesses a person’s work email from first name, last name and company domain with the common address patterns (first.last@, flast@, first@, firstlast@, f.last@ …), after checking by MX lookup that the domain receives mail. Answers the most likely address, the pattern used and every candidate; give `pattern` when you know the company’s format. The mailbox itself is not probed (no SMTP), so treat it as a best guess and check it with email_validator. Config: {"first_name": "{{First Name}}", "last_name": "{{Last Name}}", "domain": "{{Company Domain}}"}. Free.',
  category: 'people',
  tags: ['email', 'finder', 'guess', 'pattern', 'mx', 'contact'],
  legacyIds: [],
  input: Type.Object(
    {
      first_name: Type.String({ minLength: 1, maxLength: 200, description: 'Usually "{{First Name}}".' }),
      last_name: Type.String({ minLength: 1, maxLength: 200, description: 'Usually "{{Last Name}}".' }),
      domain: Type.String({
        minLength: 1,
        maxLength: 500,
        description: 'The company domain (a URL or an address works too); usually "{{Company Domain}}".',
      }),
      pattern: Type.Optional(
        Type.Union(
          PATTERNS.map((p) => Type.Literal(p)),
          { description: 'The company’s known address pattern, tried first, e.g. "{f}{last}".' },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  requires: ['first_name', 'last_name', 'domain'],
  produces: [{ field: 'email', description: 'The most likely work address (pattern-based, domain checked by MX).' }],
  // The resolver to ask for MX records (tests and locked-down networks point it at their own).
  provider: { id: 'dns', requiredEnv: [], optionalEnv: ['DNS_SERVER'] },
  cost: { credits: 0, per: 'result' },
  batchSize: 50,
  isValid: (value) => typeof (value as { email?: unknown } | null)?.email === 'string',
  async enrich(items, ctx) {
    const mxOf = mxLookups(ctx);
    return Promise.all(
      items.map(async (item): Promise<EnrichResult> => {
        const domain = mailDomain(String(item.config.domain));
        if (!domain) return { status: 'error', error: `"${String(item.config.domain).slice(0, 200)}" is not a domain`, retryable: false };
        const first = mailboxPart(String(item.config.first_name));
        const last = mailboxPart(String(item.config.last_name));
        let found = candidates(first, last, domain);
        if (found.length === 0) return { status: 'no_result', reason: 'the name has no letters to build an address from' };
        const preferred = item.config.pattern;
        if (preferred) found = [...found.filter((c) => c.pattern === preferred), ...found.filter((c) => c.pattern !== preferred)];
        const servers = await mxOf(domain);
        if (servers.kind === 'none') return { status: 'no_result', reason: servers.reason };
        if (servers.kind === 'failed') return { status: 'error', error: servers.reason, retryable: true };
        const best = found[0] as (typeof found)[number];
        return {
          status: 'ok',
          value: {
            email: best.email,
            pattern: best.pattern,
            candidates: found.map((c) => c.email),
            domain,
            mx: servers.exchanges,
            verification: 'domain_accepts_mail',
          },
        };
      }),
    );
  },
});
