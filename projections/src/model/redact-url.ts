/**
 * Removes anything that looks like an API key from a request URL before it is logged. Keys belong
 * in the `Authorization` header, but a client that sends one in the query string
 * (`?api_key=svc_pk_…`) or the path must not leave it in the logs: the api answers 401 and logs
 * the URL (api/src/logging/log-redaction.ts). It lives in this package, the only one both deployables
 * depend on, so ingest uses the same function if it ever logs a URL (its admin port,
 * ingest/src/admin-port/admin-server.ts, logs none today).
 *
 * Redacted, each replaced by `[REDACTED]`:
 * - the value of a parameter whose name, percent-decoded and case-folded, is a key name
 *   (`api_key`, `apikey`, `api-key`, `key`, `token`, `access_token`, `access-token`);
 * - any parameter value or path segment that contains `svc_pk_` in any case, also when
 *   percent-encoded (once or twice: `svc%5Fpk%5F`, `svc%255Fpk%255F`).
 * Input that is not valid percent-encoding is judged all the same and never throws.
 */

export const REDACTED = '[REDACTED]';

const KEY_PARAMETERS = new Set(['api_key', 'apikey', 'key', 'token', 'access_token']);
const KEY_PREFIX = 'svc_pk_';

export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const redactedPath = path
    .split('/')
    .map((segment) => (looksLikeKey(segment) ? REDACTED : segment))
    .join('/');
  if (queryAt === -1) return redactedPath;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map(redactPair)
    .join('&');
  return `${redactedPath}?${query}`;
}

function redactPair(pair: string): string {
  const equals = pair.indexOf('=');
  const name = equals === -1 ? pair : pair.slice(0, equals);
  if (looksLikeKey(name)) return REDACTED;
  if (equals === -1) return pair;
  const normalised = decoded(name).toLowerCase().replaceAll('-', '_');
  if (KEY_PARAMETERS.has(normalised) || looksLikeKey(pair.slice(equals + 1))) {
    return `${name}=${REDACTED}`;
  }
  return pair;
}

function looksLikeKey(text: string): boolean {
  return decoded(decoded(text)).toLowerCase().includes(KEY_PREFIX);
}

/**
 * Query-string decoding of ASCII only (`+` is a space, `%XX` its byte), enough to recognise names
 * and the key prefix; never throws, even on text that is not valid percent-encoding.
 */
function decoded(text: string): string {
  return text
    .replaceAll('+', ' ')
    .replace(/%([0-9A-Fa-f]{2})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
