import { type RefundCount, type WindowCount, WindowCounter } from './window-counter.ts';

/**
 * The in-process store (no API_REDIS_URL) for @fastify/rate-limit.
 *
 * Not the library's own LocalStore: in @fastify/rate-limit 11.2.0 it hands back its live cache
 * entry, which the limiter reads only after an await, by when concurrent requests of the same key
 * have incremented it further. A burst of N concurrent requests on one key then sees the count N
 * for all of them and refuses requests that were within the budget (rate-limit.test.ts,
 * "concurrent workers"). WindowCounter returns a snapshot per request.
 */

type Callback = (error: Error | null, result?: WindowCount) => void;
type RefundCallback = (error: Error | null, result?: RefundCount) => void;

export function localStore(maxKeys: number) {
  const counter = new WindowCounter(maxKeys);
  return class LocalWindowStore {
    incr(key: string, callback: Callback, windowMs: number): void {
      callback(null, counter.increment(key, windowMs));
    }

    read(key: string, callback: Callback, windowMs: number): void {
      callback(null, counter.read(key, windowMs));
    }

    refund(key: string, maxRefunds: number, callback: RefundCallback, windowMs: number): void {
      callback(null, counter.refund(key, windowMs, maxRefunds));
    }

    /** Per-route budgets are never configured (one budget per key across routes). */
    child(): LocalWindowStore {
      return this;
    }
  };
}
