import { Resolver } from 'node:dns/promises';
import { type PluginContext, ProviderError } from 'workflow-service/plugin-sdk';

/**
 * MX lookups for the email tools, through node:dns's Resolver so that the DNS server is ours to
 * choose: DNS_SERVER (e.g. `1.1.1.1` or `127.0.0.1:5353`, comma-separated for several) or the
 * system's resolvers when unset. Tests point it at a local responder.
 */
export type MxResult =
  /** Mail servers, lowest priority (most preferred) first. */
  | { kind: 'mx'; exchanges: string[] }
  /** No MX record, or no such domain: nothing receives mail there. */
  | { kind: 'none'; reason: string }
  /** This domain's name servers failed (SERVFAIL); another try may work. */
  | { kind: 'failed'; reason: string };

export function mxResolver(ctx: PluginContext): Resolver {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  const servers = ctx
    .env('DNS_SERVER')
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers?.length) {
    try {
      resolver.setServers(servers);
    } catch (e) {
      throw new ProviderError(`DNS_SERVER is not a list of addresses (ip or ip:port): ${(e as Error).message}`, null, false);
    }
  }
  ctx.signal.addEventListener('abort', () => resolver.cancel(), { once: true });
  return resolver;
}

/** Codes that mean "no such name / no such record" rather than a failure to ask. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'NODATA']);

/**
 * The domain's mail servers. A null MX (RFC 7505: one record with exchange "."), no MX or no such
 * domain all mean it receives no mail. A resolver that does not answer at all (timeout, refused)
 * is the same failure for every row, so it is thrown as a retryable ProviderError.
 */
export async function lookupMx(resolver: Resolver, domain: string): Promise<MxResult> {
  try {
    const records = await resolver.resolveMx(domain);
    const usable = records.filter((r) => r.exchange && r.exchange !== '.').sort((a, b) => a.priority - b.priority);
    if (usable.length === 0) return { kind: 'none', reason: `${domain} accepts no mail (null MX)` };
    return { kind: 'mx', exchanges: [...new Set(usable.map((r) => r.exchange.toLowerCase()))] };
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (ABSENT.has(code)) return { kind: 'none', reason: `${domain} has no MX record` };
    if (code === 'ESERVFAIL') return { kind: 'failed', reason: `DNS lookup of ${domain} failed (${code})` };
    throw new ProviderError(`DNS lookup of ${domain} failed: ${code || (e as Error).message}`, null, true);
  }
}

/** Sandbox: every domain "has" one fake mail server, except under the reserved .invalid TLD. */
export function sandboxMx(domain: string): MxResult {
  return domain.endsWith('.invalid')
    ? { kind: 'none', reason: `${domain} has no MX record` }
    : { kind: 'mx', exchanges: ['mx.sandbox.example.com'] };
}

/**
 * MX answers of one batch, asked once per domain (people of one company share a domain): live
 * lookups through the configured resolver, or the sandbox's fake answer.
 */
export function mxLookups(ctx: PluginContext): (domain: string) => Promise<MxResult> {
  const resolver = ctx.providerMode === 'live' ? mxResolver(ctx) : null;
  const seen = new Map<string, Promise<MxResult>>();
  return (domain) => {
    let p = seen.get(domain);
    if (!p) {
      p = resolver ? lookupMx(resolver, domain) : Promise.resolve(sandboxMx(domain));
      seen.set(domain, p);
    }
    return p;
  };
}
