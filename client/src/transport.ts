import { apiError } from './errors.ts';
import { KeptPages } from './kept-pages.ts';
import {
  isRetriableStatus,
  RETRY_DEFAULTS,
  type RetryEvent,
  type RetryOptions,
  retryDelayMs,
  sleep,
} from './retry.ts';

export interface ClientOptions {
  /** Origin of the api, with a path prefix if it is served under one: `https://api.example.com`. */
  readonly baseUrl: string;
  /** The API key (`svc_pk_…`), sent as `Authorization: Bearer` on every request, never in a URL. */
  readonly apiKey: string;
  /** The company to act for (`X-Service-Company`); needed only by keys granted several companies. */
  readonly company?: string;
  /** A fetch implementation (default: the global one of Node 18+ and browsers). */
  readonly fetch?: typeof fetch;
  readonly retry?: RetryOptions;
  /** Called before each wait between attempts (logging, metrics). */
  readonly onRetry?: (event: RetryEvent) => void;
  /** Aborts every request of this client, and any wait between attempts. */
  readonly signal?: AbortSignal;
  /**
   * Pages with an ETag (the first page of a sync-token or since call) kept to poll them: the same
   * URL is asked with `If-None-Match`, and a `304` (which costs no rate-limit budget) answers with
   * the kept page. The most recent ones are kept (default 64; 0 turns polling off).
   */
  readonly conditionalPages?: number;
}

export interface CallOptions {
  /** Aborts this call (its requests and its waits), with the client's signal. */
  readonly signal?: AbortSignal;
}

/** A query as sent: names such as `filter[updated_since]` map to a string or a number. */
export type QueryParams = Readonly<Record<string, string | number | undefined>>;

export interface Transport {
  /** The URL of `path` (`/v1/sites`) under the base URL, with `query`. */
  url(path: string, query?: QueryParams): string;
  /**
   * GET `url` and parse its JSON; retries 429, 5xx and network errors, throws `ApiError` for any
   * other error answer. `url` must lie under the base URL: the key is never sent elsewhere, even
   * when a response's link points elsewhere.
   */
  getJson<T>(url: string, options?: CallOptions): Promise<T>;
  /**
   * GET `url` asking for `accept` (a streamed answer), retried as `getJson` until an answer that is
   * not retried: an ok answer is returned with its body unread, for the caller to read as it comes;
   * any other throws `ApiError`. The same rule of the base URL applies.
   */
  openStream(url: string, accept: string, options?: CallOptions): Promise<Response>;
  /**
   * Waits before trying again what failed `attempt` times in a row (from 1) after its answer came
   * (a stream cut mid-body), with the client's retry policy and `onRetry`; throws `error` once
   * `attempt` reaches the attempts allowed.
   */
  backoff(attempt: number, url: string, error: unknown, options?: CallOptions): Promise<void>;
}

export function createTransport(options: ClientOptions): Transport {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const retry = { ...RETRY_DEFAULTS, ...options.retry };
  const headers: Record<string, string> = {
    accept: 'application/json, application/problem+json',
    authorization: `Bearer ${options.apiKey}`,
    ...(options.company === undefined ? {} : { 'x-service-company': options.company }),
  };

  const kept = new KeptPages(options.conditionalPages ?? 64);

  const url = (path: string, query: QueryParams = {}) => {
    const target = new URL(`${basePath}${path}`, base.origin);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) target.searchParams.set(name, String(value));
    }
    return target.href;
  };

  /** The signal of a call: the client's and the call's together. */
  const signalOf = (call: CallOptions): AbortSignal | undefined => {
    const signals = [options.signal, call.signal].filter((s): s is AbortSignal => s !== undefined);
    return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  };

  const refuseOutsideBase = (target: string): void => {
    const parsed = new URL(target);
    if (parsed.origin !== base.origin || !parsed.pathname.startsWith(`${basePath}/`)) {
      throw new Error(
        `refusing to send the API key to ${parsed.origin}${parsed.pathname}: not under ${base.href}`,
      );
    }
  };

  /**
   * One request; a network error (no answer, or the connection cut mid-body) is a value. The body
   * is read here, except an ok streamed answer's: its reader reads it as it comes.
   */
  const attemptOnce = async (
    target: string,
    sent: Record<string, string>,
    signal: AbortSignal | undefined,
    streamed: boolean,
  ): Promise<Attempt> => {
    try {
      const response = await doFetch(target, { headers: sent, ...(signal ? { signal } : {}) });
      if (streamed && response.ok) return { kind: 'answer', response, text: '' };
      return { kind: 'answer', response, text: await response.text() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      return { kind: 'network', error };
    }
  };

  /**
   * Attempts of a GET until `settle` takes an answer (it returns a value) or one is not retried:
   * 429, 5xx and network errors are tried again after `retryDelayMs`, up to `retry.maxAttempts`.
   */
  const attempts = async <T>(
    target: string,
    call: CallOptions,
    sent: () => Record<string, string>,
    streamed: boolean,
    settle: (response: Response, text: string) => { value: T } | undefined,
  ): Promise<T> => {
    refuseOutsideBase(target);
    const signal = signalOf(call);
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const result = await attemptOnce(target, sent(), signal, streamed);
      let event: RetryEvent;
      if (result.kind === 'answer') {
        const { response, text } = result;
        const settled = settle(response, text);
        if (settled !== undefined) return settled.value;
        if (!isRetriableStatus(response.status) || attempt >= retry.maxAttempts) {
          throw apiError(
            response.status,
            parseJson(text),
            target,
            response.headers.get('x-request-id') ?? undefined,
          );
        }
        const delayMs = retryDelayMs(attempt, retry, response.headers.get('retry-after'));
        event = { attempt, delayMs, url: target, status: response.status };
      } else {
        if (attempt >= retry.maxAttempts) throw result.error;
        event = { attempt, delayMs: retryDelayMs(attempt, retry, null), url: target, error: result.error };
      }
      options.onRetry?.(event);
      await sleep(event.delayMs, signal);
    }
  };

  const getJson = <T>(target: string, call: CallOptions = {}): Promise<T> =>
    attempts(
      target,
      call,
      () => {
        const etag = kept.etag(target);
        return etag === undefined ? headers : { ...headers, 'if-none-match': etag };
      },
      false,
      (response, text) => {
        if (response.status === 304) {
          const page = kept.page(target);
          if (page !== undefined) return { value: JSON.parse(page) as T };
          return undefined;
        }
        if (!response.ok) return undefined;
        kept.remember(target, response.headers.get('etag'), text);
        return { value: JSON.parse(text) as T };
      },
    );

  const openStream = (target: string, accept: string, call: CallOptions = {}): Promise<Response> =>
    attempts(
      target,
      call,
      () => ({ ...headers, accept: `${accept}, application/problem+json` }),
      true,
      (response) => (response.ok ? { value: response } : undefined),
    );

  const backoff = async (attempt: number, target: string, error: unknown, call: CallOptions = {}) => {
    if (attempt >= retry.maxAttempts) throw error;
    const event: RetryEvent = { attempt, delayMs: retryDelayMs(attempt, retry, null), url: target, error };
    options.onRetry?.(event);
    await sleep(event.delayMs, signalOf(call));
  };

  return { url, getJson, openStream, backoff };
}

type Attempt =
  | { readonly kind: 'answer'; readonly response: Response; readonly text: string }
  | { readonly kind: 'network'; readonly error: unknown };

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
