/**
 * What a log line may show of a URL. A customer who sends a key as `?api_key=...` by mistake,
 * or an odds feed whose URL carries `apiKey=...`, must not leave a credential in the logs:
 * the values of credential-looking query parameters are replaced, and an API key
 * (`service_` + 64 hex) is replaced wherever it stands in the URL, path included.
 */

export const REDACTED = '[redacted]';

/** Parameter names that carry credentials in practice (api_key, apiKey, access_token, password, sig, ...). */
const CREDENTIAL_PARAMETER = /key|token|secret|passw|auth|session|signature|^sig$|credential|cookie/i;
const API_KEY = /service_[0-9a-f]{64}/gi;

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    // A malformed escape cannot be decoded: judge the raw text.
    return raw;
  }
}

/** The URL (path and query, or absolute) with credentials replaced; never throws, whatever the input. */
export function redactUrl(url: string): string {
  const withoutKeys = url.replace(API_KEY, `service_${REDACTED}`);
  const queryStart = withoutKeys.indexOf('?');
  if (queryStart === -1) return withoutKeys;
  const hashStart = withoutKeys.indexOf('#', queryStart);
  const query = withoutKeys.slice(queryStart + 1, hashStart === -1 ? undefined : hashStart);
  const fragment = hashStart === -1 ? '' : withoutKeys.slice(hashStart);
  const parts = query.split('&').map((part) => {
    const equals = part.indexOf('=');
    if (equals === -1) return part;
    return CREDENTIAL_PARAMETER.test(decodedName(part.slice(0, equals))) ? `${part.slice(0, equals)}=${REDACTED}` : part;
  });
  return `${withoutKeys.slice(0, queryStart)}?${parts.join('&')}${fragment}`;
}
