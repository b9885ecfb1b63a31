import { LRUCache } from 'lru-cache';

/**
 * An in-process fixed-window counter, bounded in memory: the in-process budget (local-store.ts)
 * and the fallback while Redis is unreachable (shared-store.ts). Same semantics as the library's
 * local store and as the Redis script: the window opens at the first request of a key and lasts
 * `windowMs`. At most `maxKeys` keys are kept; the least recently counted one is evicted and
 * starts a fresh window if it comes back.
 */

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  readonly current: number;
  /** Milliseconds until the window closes. */
  readonly ttl: number;
}

/** A refund's answer: the window after it, and whether the request was given back. */
export interface RefundCount extends WindowCount {
  readonly refunded: boolean;
}

interface Entry {
  count: number;
  startMs: number;
  /** Requests given back in this window (bounded: refund's `maxRefunds`). */
  refunds: number;
}

export class WindowCounter {
  readonly #entries: LRUCache<string, Entry>;
  readonly #now: () => number;

  constructor(maxKeys: number, now: () => number = Date.now) {
    this.#entries = new LRUCache({ max: maxKeys });
    this.#now = now;
  }

  increment(key: string, windowMs: number): WindowCount {
    const nowMs = this.#now();
    let entry = this.#entries.get(key);
    if (entry === undefined || entry.startMs + windowMs <= nowMs) {
      entry = { count: 0, startMs: nowMs, refunds: 0 };
      this.#entries.set(key, entry);
    }
    entry.count += 1;
    return { current: entry.count, ttl: entry.startMs + windowMs - nowMs };
  }

  /**
   * Gives back one request of the current window (a 304 costs no budget: api/src/sync/), at most
   * `maxRefunds` per window; nothing when the window has closed, holds none or has given back
   * `maxRefunds` already (that request then stays counted).
   */
  refund(key: string, windowMs: number, maxRefunds: number): RefundCount {
    const entry = this.#entries.peek(key);
    const nowMs = this.#now();
    if (entry === undefined || entry.startMs + windowMs <= nowMs)
      return { current: 0, ttl: 0, refunded: false };
    const refunded = entry.count > 0 && entry.refunds < maxRefunds;
    if (refunded) {
      entry.count -= 1;
      entry.refunds += 1;
    }
    return { current: entry.count, ttl: entry.startMs + windowMs - nowMs, refunded };
  }

  /** A read is not a use: it does not make the key more recent. */
  read(key: string, windowMs: number): WindowCount {
    const entry = this.#entries.peek(key);
    const nowMs = this.#now();
    if (entry === undefined || entry.startMs + windowMs <= nowMs) return { current: 0, ttl: 0 };
    return { current: entry.count, ttl: entry.startMs + windowMs - nowMs };
  }
}
