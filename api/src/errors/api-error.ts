/**
 * The catalogue of error codes (api/README.md, "Errors") and the one error type handlers throw. The error
 * handler turns every ApiError into an RFC 9457 problem document; anything else becomes
 * internal_error without internals.
 */

export const ERROR_CODES = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  company_selection_required: { status: 400, title: 'Company selection required' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  api_key_expired: { status: 401, title: 'API key expired' },
  api_key_revoked: { status: 401, title: 'API key revoked' },
  insufficient_scope: { status: 403, title: 'Insufficient scope' },
  company_not_available: { status: 403, title: 'Company not available' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  sync_window_expired: { status: 410, title: 'Sync window expired' },
  rate_limit_exceeded: { status: 429, title: 'Rate limit exceeded' },
  too_many_requests_in_progress: { status: 429, title: 'Too many requests in progress' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One offending parameter of a 400 (query or path parameter name, or header name). */
export interface ParameterError {
  readonly parameter: string;
  readonly detail: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly errors: readonly ParameterError[] | undefined;
  /** Extra response headers (WWW-Authenticate, Allow, Retry-After). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: readonly ParameterError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.code = code;
    this.errors = options.errors;
    this.headers = options.headers;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/** The detail of a cursor that was not issued by this api as sent. */
export const CURSOR_DETAIL = 'The cursor is not valid: use links.next or links.prev exactly as returned.';

/** A refused parameter; a refused `cursor` is always invalid_cursor (api/README.md, "Errors"). */
export function invalidParameter(parameter: string, detail: string): ApiError {
  if (parameter === 'cursor') return invalidCursor(detail);
  return new ApiError('invalid_parameter', `Parameter ${parameter}: ${detail}`, {
    errors: [{ parameter, detail }],
  });
}

export function invalidCursor(detail: string): ApiError {
  return new ApiError('invalid_cursor', detail, { errors: [{ parameter: 'cursor', detail }] });
}

/**
 * The one 429 (api/README.md, "Rate limiting and overload"), whichever path spent the budget: the
 * limiter's hook, a malformed URL metered by hand, a request Node's parser refused. `Retry-After`
 * (whole seconds, at least 1) travels with the error so every path sends it; without a known
 * window (`ttlMs` undefined) the header the limiter already put on the reply stands.
 */
export function rateLimitExceeded(ttlMs?: number): ApiError {
  const prefix = 'The request budget of this API key (or client address) is spent';
  if (ttlMs === undefined) return new ApiError('rate_limit_exceeded', `${prefix}; retry later.`);
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return new ApiError('rate_limit_exceeded', `${prefix}; retry in ${seconds} s.`, {
    headers: { 'retry-after': String(seconds) },
  });
}

export function notFound(detail = 'No such record.'): ApiError {
  return new ApiError('not_found', detail);
}
