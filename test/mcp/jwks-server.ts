import { type JWTPayload, SignJWT, exportJWK, generateKeyPair } from 'jose';

/**
 * A stand-in OAuth authorization server on loopback: it publishes a JWKS and signs access tokens,
 * which is all a resource server ever sees of one.
 */
export interface TestIssuer {
  issuer: string;
  /** Signs a token; `exp` is one hour ahead unless `claims.exp` says otherwise. */
  sign(claims: JWTPayload, options?: { foreignKey?: boolean }): Promise<string>;
  stop(): void;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/.well-known/jwks.json' ? Response.json({ keys: [jwk] }) : new Response('not found', { status: 404 }),
  });
  const issuer = `http://127.0.0.1:${server.port}`;
  return {
    issuer,
    async sign(claims, options = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, iat: now, exp: now + 3600, ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
        .sign(options.foreignKey ? foreign.privateKey : privateKey);
    },
    stop: () => void server.stop(true),
  };
}
