import { type JWTPayload, createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { ServiceError } from '../../core/errors.ts';

export interface JwtVerifierSettings {
  issuer: string;
  jwksUrl: string;
  audiences: string[];
}

export type JwtVerifier = (token: string) => Promise<JWTPayload>;

/** Failures that mean "this token is not good", as opposed to "the issuer cannot be reached". */
const BAD_TOKEN = [
  errors.JWTExpired,
  errors.JWTClaimValidationFailed,
  errors.JWTInvalid,
  errors.JWSInvalid,
  errors.JWSSignatureVerificationFailed,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
];

/**
 * Verifies OAuth access tokens as a resource server: signature against the issuer's JWKS (fetched
 * and cached by jose, refreshed on an unknown key id), issuer, audience = this MCP resource, and
 * expiry (required). A bad token is 401; an unreachable JWKS is 503, since retrying may help.
 */
export function createJwtVerifier(settings: JwtVerifierSettings): JwtVerifier {
  const jwks = createRemoteJWKSet(new URL(settings.jwksUrl));
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: settings.issuer,
        audience: settings.audiences,
        requiredClaims: ['exp'],
        clockTolerance: 5,
      });
      return payload;
    } catch (e) {
      if (BAD_TOKEN.some((k) => e instanceof k)) {
        throw new ServiceError('unauthorized', {
          message: `Invalid access token: ${(e as Error).message}`,
          reason: (e as { code?: string }).code ?? 'invalid',
        });
      }
      throw new ServiceError('unavailable', {
        message: `Cannot check the access token: the authorization server's keys (${settings.jwksUrl}) are unreachable; retry shortly`,
      });
    }
  };
}

/** Whether a bearer token is a JWT (three base64url parts) rather than an API key sent as a bearer. */
export const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
