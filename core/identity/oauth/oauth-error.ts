/**
 * An OAuth error as the RFCs name it (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 8707 §2): answered as
 * `{"error", "error_description"}` by the token, registration and revocation endpoints, and sent
 * back to the client's redirect URI by the authorization endpoint once that URI is known to be good.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }

  toJSON() {
    return { error: this.error, error_description: this.description };
  }
}
