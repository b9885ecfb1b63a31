import { apiError } from './errors.ts';
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

  /** One request; a network error (no answer, or the connection cut mid-body) is a value. */
  const attemptOnce = async (target: string, signal: AbortSignal | undefined): Promise<Attempt> => {
    const etag = kept.etag(target);
    const sent = etag === undefined ? headers : { ...headers, 'if-none-match': etag };
    try {
      const response = await doFetch(target, { headers: sent, ...(signal ? { signal } : {}) });
      return { kind: 'answer', response, text: await response.text() };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      return { kind: 'network', error };
    }
  };

  const getJson = async <T>(target: string, call: CallOptions = {}): Promise<T> => {
    const parsed = new URL(target);
    if (parsed.origin !== base.origin || !parsed.pathname.startsWith(`${basePath}/`)) {
      throw new Error(
        `refusing to send the API key to ${parsed.origin}${parsed.pathname}: not under ${base.href}`,
      );
    }
    const signals = [options.signal, call.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];

    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const result = await attemptOnce(target, signal);
      let event: RetryEvent;
      if (result.kind === 'answer') {
        const { response, text } = result;
        if (response.status === 304) {
          const page = kept.page(target);
          if (page !== undefined) return JSON.parse(page) as T;
        }
        if (response.ok && response.status !== 304) {
          kept.remember(target, response.headers.get('etag'), text);
          return JSON.parse(text) as T;
        }
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

  return { url, getJson };
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

/** The pages that came with an ETag, by URL, the most recently used last (a small LRU). */
class KeptPages {
  readonly #max: number;
  readonly #pages = new Map<string, { etag: string; text: string }>();

  constructor(max: number) {
    this.#max = max;
  }

  etag(url: string): string | undefined {
    return this.#pages.get(url)?.etag;
  }

  page(url: string): string | undefined {
    const entry = this.#pages.get(url);
    if (entry === undefined) return undefined;
    this.#pages.delete(url);
    this.#pages.set(url, entry);
    return entry.text;
  }

  remember(url: string, etag: string | null, text: string): void {
    this.#pages.delete(url);
    if (etag === null || this.#max === 0) return;
    this.#pages.set(url, { etag, text });
    if (this.#pages.size > this.#max) this.#pages.delete(this.#pages.keys().next().value as string);
  }
}
