/**
 * An in-process fixed-window counter, bounded in memory: the fallback budget while Redis is
 * unreachable (shared-store.ts). Same semantics as the library's local store and as the Redis
 * script: the window opens at the first request of a key and lasts `windowMs`.
 */

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  readonly current: number;
  /** Milliseconds until the window closes. */
  readonly ttl: number;
}

interface Entry {
  count: number;
  startMs: number;
}

export class WindowCounter {
  // A Map iterates in insertion order: re-inserting on every hit makes the first entry the least
  // recently used one, evicted when the bound is reached (an evicted key starts a fresh window).
  readonly #entries = new Map<string, Entry>();

  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(maxKeys: number, now: () => number = Date.now) {
    this.#maxKeys = maxKeys;
    this.#now = now;
  }

  increment(key: string, windowMs: number): WindowCount {
    const nowMs = this.#now();
    let entry = this.#entries.get(key);
    if (entry === undefined || entry.startMs + windowMs <= nowMs) {
      entry = { count: 0, startMs: nowMs };
    }
    entry.count += 1;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (this.#entries.size > this.#maxKeys) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return { current: entry.count, ttl: entry.startMs + windowMs - nowMs };
  }

  read(key: string, windowMs: number): WindowCount {
    const entry = this.#entries.get(key);
    const nowMs = this.#now();
    if (entry === undefined || entry.startMs + windowMs <= nowMs) return { current: 0, ttl: 0 };
    return { current: entry.count, ttl: entry.startMs + windowMs - nowMs };
  }
}
