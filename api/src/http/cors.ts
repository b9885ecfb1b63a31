/**
 * CORS (api/README.md, "CORS"): partners may call the api from a browser. Credentials are bearer
 * keys in `Authorization`, never cookies, so any origin may call (`*`, no `Vary: Origin`) and the
 * browser still sends nothing the page's script did not put there itself.
 */

/**
 * On every response: any origin may read it, its rate-limit state, request id, the ETag a poll
 * sends back and the freshness of the data.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, ETag, Data-Current-As-Of',
};

/** What a path of the contract allows (405 and preflight answers). */
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

/**
 * The answer to a preflight (`OPTIONS` with `Access-Control-Request-*`): the methods and request
 * headers a browser may use, cached by the browser for two hours (Chromium's cap).
 */
export const PREFLIGHT_HEADERS: Readonly<Record<string, string>> = {
  allow: ALLOWED_METHODS,
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'Authorization, X-Service-Company, If-None-Match',
  'access-control-max-age': '7200',
};
