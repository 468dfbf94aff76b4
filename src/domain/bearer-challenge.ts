/**
 * The challenge of a 401 `invalid_api_key` (RFC 6750 section 3): `WWW-Authenticate: Bearer
 * realm="api"`, with `error="invalid_token"` when the request carried a credential (an unknown,
 * revoked or malformed key, or two Authorization headers). A request without one gets the bare
 * challenge, as RFC 6750 asks: it was not told anything about a token it did not send.
 */
export const BEARER_REALM = 'api';

export function bearerChallenge(credentialSent: boolean): string {
  return credentialSent ? `Bearer realm="${BEARER_REALM}", error="invalid_token"` : `Bearer realm="${BEARER_REALM}"`;
}
