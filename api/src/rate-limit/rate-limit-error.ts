import { ApiError } from '../http/api-error.ts';

/**
 * The 429 of an exhausted budget as the api's own error, so it goes through the one error handler
 * and becomes a `rate_limit_exceeded` problem document. The limiter has already put the
 * RateLimit-* headers and Retry-After on the reply; Retry-After is repeated here so the problem
 * carries it even if the limiter's header options change.
 */
export function rateLimitExceeded(ttlMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return new ApiError(
    'rate_limit_exceeded',
    `The request budget of this API key (or client address) is spent; retry in ${seconds} s.`,
    { headers: { 'retry-after': String(seconds) } },
  );
}
