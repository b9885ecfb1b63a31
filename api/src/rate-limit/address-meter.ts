import type { WindowCount } from './window-counter.ts';

/**
 * Metering for answers given before Fastify has a request: a request line or headers that Node's
 * HTTP parser rejects (connections/client-error.ts). It spends the client address's budget in the same
 * store as every other request, so that answer carries true RateLimit-* headers too (every
 * response: docs/public-data-api-v1.md, "Limits"). Behind a proxy (API_TRUST_PROXY) the address is
 * the proxy's: no header can be read.
 */

export interface AddressMetering {
  /** `RateLimit-*` header values. */
  readonly headers: Readonly<Record<string, string>>;
  readonly exceeded: boolean;
  /** Milliseconds until the window closes. */
  readonly ttlMs: number;
}

/**
 * Callback style on purpose: the in-process store answers synchronously, so the caller can still
 * write to a socket the client is half-closing (a promise would defer past Node's auto-end).
 */
export type AddressMeter = (address: string, done: (metering: AddressMetering) => void) => void;

interface Store {
  incr(key: string, callback: (error: Error | null, result?: WindowCount) => void, windowMs: number): void;
}

export function addressMeter(
  store: Store,
  keyOf: (address: string) => string,
  max: number,
  windowMs: number,
): AddressMeter {
  return (address, done) => {
    store.incr(
      keyOf(address),
      (_error, result) => {
        // The stores never fail (Redis errors fall back in-process); a missing result counts as 0.
        const current = result?.current ?? 0;
        const ttlMs = result?.ttl ?? windowMs;
        const headers: Record<string, string> = {
          'ratelimit-limit': String(max),
          'ratelimit-remaining': String(Math.max(0, max - current)),
          'ratelimit-reset': String(Math.ceil(ttlMs / 1000)),
        };
        done({ headers, exceeded: current > max, ttlMs });
      },
      windowMs,
    );
  };
}
