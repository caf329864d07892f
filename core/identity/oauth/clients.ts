import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { safeFetch } from '../../plugins/safe-fetch.ts';
import type { OAuthClientRecord, OAuthRepo } from '../../ports/storage.ts';
import { OAuthError } from './oauth-error.ts';
import { checkRedirectUri } from './redirect-uris.ts';

const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);
const MAX_REDIRECT_URIS = 10;
/** Client ID Metadata Documents: small, fetched without redirects, kept a few minutes. */
const DOCUMENT_MAX_BYTES = 5_120;
const DOCUMENT_TTL_MS = 5 * 60_000;
const MAX_CLIENT_ID_LENGTH = 512;

export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const text = (value: unknown, name: string, max: number): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > max) {
    throw new OAuthError('invalid_client_metadata', `${name} must be a string of at most ${max} characters`);
  }
  return value.trim() || undefined;
};

function redirectUris(value: unknown, error: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_REDIRECT_URIS) {
    throw new OAuthError(error, `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} URIs`);
  }
  return value.map((v) => {
    try {
      return checkRedirectUri(v);
    } catch (e) {
      if (e instanceof OAuthError) throw new OAuthError(error === 'invalid_client_metadata' ? e.error : error, e.description);
      throw e;
    }
  });
}

/**
 * OpenID Connect's `application_type`: a `web` client redirects to https pages of its own site; a
 * `native` one (desktop, CLI, IDE) to a loopback port or its private-use scheme (RFC 8252). Not
 * given, it is read from the redirect URIs (MCP clients long registered without it).
 */
function applicationType(value: unknown, uris: string[]): 'web' | 'native' {
  const nativeOnly = (u: string) => !u.startsWith('https://');
  if (value === undefined || value === null) return uris.some(nativeOnly) ? 'native' : 'web';
  if (value !== 'web' && value !== 'native') throw new OAuthError('invalid_client_metadata', 'application_type must be "web" or "native"');
  if (value === 'web') {
    const local = uris.find((u) => nativeOnly(u) || /^https:\/\/(localhost|127\.0\.0\.1|\[::1\])[:/]/i.test(u));
    if (local) {
      throw new OAuthError(
        'invalid_redirect_uri',
        `A "web" application redirects to https pages of its site, not ${local}: register it with application_type "native"`,
      );
    }
  }
  return value;
}

/** What a registration asks for, checked (RFC 7591 §2); only what this server does is accepted. */
function checkMetadata(body: Record<string, unknown>) {
  const uris = redirectUris(body.redirect_uris, 'invalid_redirect_uri');
  const application_type = applicationType(body.application_type, uris);
  const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!AUTH_METHODS.includes(method as (typeof AUTH_METHODS)[number])) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }
  const grants = body.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grants) || grants.some((g) => !GRANT_TYPES.has(g as string))) {
    throw new OAuthError('invalid_client_metadata', 'grant_types may hold authorization_code and refresh_token only');
  }
  const responses = body.response_types ?? ['code'];
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code')) {
    throw new OAuthError('invalid_client_metadata', 'response_types may hold code only (authorization code with PKCE)');
  }
  return {
    redirect_uris: uris,
    application_type,
    token_endpoint_auth_method: method as OAuthClientRecord['authMethod'],
    grant_types: grants as string[],
    response_types: responses as string[],
    client_name: text(body.client_name, 'client_name', 255),
    client_uri: text(body.client_uri, 'client_uri', 2000),
    logo_uri: text(body.logo_uri, 'logo_uri', 2000),
    scope: text(body.scope, 'scope', 255),
    software_id: text(body.software_id, 'software_id', 255),
    software_version: text(body.software_version, 'software_version', 255),
  };
}

const withoutEmpty = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** The name people see on the consent page and in the console: the client's own, else its address. */
function displayName(name: string | undefined, uris: string[], fallbackUri?: string): string {
  if (name) return name;
  try {
    return new URL(fallbackUri ?? uris[0] ?? '').host || 'An unnamed application';
  } catch {
    return 'An unnamed application';
  }
}

/**
 * RFC 7591 dynamic client registration: stores the client (a secret only as its SHA-256) and
 * answers what was registered, with the secret shown this once.
 */
export async function registerClient(repo: OAuthRepo, body: Record<string, unknown>) {
  const metadata = checkMetadata(body);
  const clientId = `wfc_${randomBytes(16).toString('base64url')}`;
  const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : `wfcs_${randomBytes(32).toString('base64url')}`;
  const now = Date.now();
  const answered = withoutEmpty({
    ...metadata,
    client_name: displayName(metadata.client_name, metadata.redirect_uris, metadata.client_uri),
  });
  await repo.createClient({
    clientId,
    secretHash: secret ? sha256(secret) : null,
    clientName: answered.client_name as string,
    redirectUris: metadata.redirect_uris,
    authMethod: metadata.token_endpoint_auth_method,
    metadata: answered,
    createdAt: now,
  });
  return {
    client_id: clientId,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(now / 1000),
    ...answered,
  };
}

/** Whether a client id is a Client ID Metadata Document URL rather than a registered id. */
export const isUrlClientId = (clientId: string) => /^https?:\/\//i.test(clientId);

/**
 * https with a path, as the Client ID Metadata Document draft requires; http only on a loopback
 * host and only where ALLOW_PRIVATE_NETWORK lets this server reach it (development and tests).
 */
function documentUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new OAuthError('invalid_client', 'The client_id is not a valid URL');
  }
  const loopbackHttp = url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if ((url.protocol !== 'https:' && !loopbackHttp) || url.pathname === '/' || url.hash || url.username || url.password) {
    throw new OAuthError('invalid_client', 'A URL client_id must be an https URL with a path, no fragment and no credentials');
  }
  return url;
}

/** Client ID Metadata Documents fetched lately, by URL (or why they could not be read), at most MAX_DOCUMENTS. */
const documents = new Map<string, { client: OAuthClientRecord | OAuthError; until: number }>();
const MAX_DOCUMENTS = 1_000;
/** A document that could not be read is not asked for again for a minute. */
const FAILURE_TTL_MS = 60_000;

function remember(clientId: string, client: OAuthClientRecord | OAuthError, ttl: number): void {
  documents.delete(clientId);
  if (documents.size >= MAX_DOCUMENTS) documents.delete(documents.keys().next().value as string); // the oldest
  documents.set(clientId, { client, until: Date.now() + ttl });
}

async function fetchDocument(clientId: string): Promise<OAuthClientRecord> {
  const cached = documents.get(clientId);
  if (cached && cached.until > Date.now()) {
    if (cached.client instanceof OAuthError) throw cached.client;
    return cached.client;
  }
  try {
    const client = await readDocument(clientId);
    remember(clientId, client, DOCUMENT_TTL_MS);
    return client;
  } catch (e) {
    if (e instanceof OAuthError) remember(clientId, e, FAILURE_TTL_MS);
    throw e;
  }
}

async function readDocument(clientId: string): Promise<OAuthClientRecord> {
  const url = documentUrl(clientId);
  let body: Record<string, unknown>;
  try {
    const res = await safeFetch(url, {
      headers: { accept: 'application/json' },
      maxBytes: DOCUMENT_MAX_BYTES,
      maxRedirects: 0,
      timeoutMs: 5_000,
    });
    if (res.status !== 200) throw new Error(`it answered HTTP ${res.status}`);
    try {
      body = JSON.parse(res.text());
    } catch {
      throw new Error('it is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('it is not a JSON object');
  } catch (e) {
    // What the address answered is never repeated: the page would show a stranger's content as ours.
    throw new OAuthError('invalid_client', `The client's metadata document at ${url.href} could not be read: ${(e as Error).message}`);
  }
  if (body.client_id !== clientId) {
    throw new OAuthError('invalid_client', `The metadata document at ${url.href} names another client_id than its own URL`);
  }
  let uris: string[];
  let name: string | undefined;
  try {
    uris = redirectUris(body.redirect_uris, 'invalid_client');
    name = text(body.client_name, 'client_name', 255);
  } catch {
    throw new OAuthError('invalid_client', `The metadata document at ${url.href} has no valid redirect_uris or client_name`);
  }
  const client: OAuthClientRecord = {
    clientId,
    secretHash: null,
    clientName: displayName(name, uris, clientId),
    redirectUris: uris,
    // Such clients hold no secret here: public clients, as the draft describes for native and browser apps.
    authMethod: 'none',
    metadata: withoutEmpty({ client_id: clientId, client_name: name, redirect_uris: uris, client_uri: body.client_uri }),
    createdAt: Date.now(),
  };
  return client;
}

/** The client an id names: registered here, or described by the document its URL serves. */
export async function findClient(repo: OAuthRepo, clientId: unknown): Promise<OAuthClientRecord> {
  if (typeof clientId !== 'string' || clientId === '') throw new OAuthError('invalid_request', 'client_id is missing');
  // Client ids are printable ASCII (registered ids, or URLs as their documents name them): anything else names no client.
  if (clientId.length > MAX_CLIENT_ID_LENGTH || !/^[\x21-\x7e]+$/.test(clientId))
    throw new OAuthError('invalid_client', 'Unknown client_id');
  if (isUrlClientId(clientId)) return fetchDocument(clientId);
  const client = await repo.getClient(clientId);
  if (!client)
    throw new OAuthError(
      'invalid_client',
      `Unknown client_id ${JSON.stringify(clientId)}: register the client first (${'/oauth/register'})`,
      401,
    );
  return client;
}

/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3): HTTP Basic or
 * the form's client_id/client_secret, as the client registered; a public client names itself only.
 */
export async function authenticateClient(repo: OAuthRepo, form: URLSearchParams, authorization: string | null): Promise<OAuthClientRecord> {
  let clientId = form.get('client_id') ?? undefined;
  let secret = form.get('client_secret') ?? undefined;
  let method: OAuthClientRecord['authMethod'] = secret ? 'client_secret_post' : 'none';
  const basic = /^Basic\s+(.+)$/i.exec(authorization ?? '')?.[1];
  if (basic) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new OAuthError('invalid_client', 'The Basic credentials are not client_id:client_secret', 401);
    let basicId: string;
    try {
      // RFC 6749 §2.3.1: both parts are form-encoded before they are joined.
      basicId = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
    } catch {
      throw new OAuthError('invalid_client', 'The Basic credentials are not URL-encoded client_id:client_secret', 401);
    }
    if (clientId && clientId !== basicId) throw new OAuthError('invalid_request', 'client_id differs from the Basic credentials');
    clientId = basicId;
    method = 'client_secret_basic';
  }
  let client: OAuthClientRecord;
  try {
    client = await findClient(repo, clientId);
  } catch (e) {
    if (e instanceof OAuthError) throw new OAuthError('invalid_client', e.description, 401);
    throw e;
  }
  if (client.secretHash === null) {
    if (secret) throw new OAuthError('invalid_client', 'This client is public (token_endpoint_auth_method none): send no secret', 401);
    return client;
  }
  if (!secret) throw new OAuthError('invalid_client', 'This client authenticates with its client_secret', 401);
  const [a, b] = [Buffer.from(sha256(secret)), Buffer.from(client.secretHash)];
  if (!timingSafeEqual(a, b)) throw new OAuthError('invalid_client', 'Wrong client_secret', 401);
  if (method === 'none') throw new OAuthError('invalid_client', 'Send the client_secret', 401);
  return client;
}
