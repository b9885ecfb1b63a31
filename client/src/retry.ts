/**
 * When to try a GET again. GETs are idempotent, so a 429, a 5xx and a network error are retried:
 * after `Retry-After` when the answer carries one (429 always does; an overloaded api's 503 too),
 * else after an exponential backoff with jitter. Attempts are bounded; an AbortSignal ends a wait.
 */

export interface RetryOptions {
  /** Attempts per request, the first one included (default 5; 1 = never retry). */
  readonly maxAttempts?: number;
  /** Backoff before the second attempt (default 500 ms), doubled for each further one. */
  readonly baseDelayMs?: number;
  /** Longest backoff (default 30 s). A longer `Retry-After` is still honoured: the server knows. */
  readonly maxDelayMs?: number;
}

/** What `onRetry` is told before each wait. */
export interface RetryEvent {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly delayMs: number;
  readonly url: string;
  /** The answer's status, when there was an answer. */
  readonly status?: number;
  /** The network error, when there was none. */
  readonly error?: unknown;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

export function isRetriableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Milliseconds to wait after failed attempt `attempt` (from 1). `Retry-After` (delta seconds or an
 * HTTP date) plus up to `baseDelayMs` of jitter, so workers sharing a key's budget do not all come
 * back in the same instant; otherwise half the exponential step plus a random part of the other half.
 */
export function retryDelayMs(
  attempt: number,
  options: Required<RetryOptions>,
  retryAfter: string | null,
  now: number = Date.now(),
  random: () => number = Math.random,
): number {
  const jitter = random() * options.baseDelayMs;
  const serverMs = parseRetryAfter(retryAfter, now);
  if (serverMs !== undefined) return serverMs + jitter;
  const step = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return step / 2 + random() * (step / 2);
}

function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
