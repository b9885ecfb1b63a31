/**
 * Turns of the event loop shared between keys (api/README.md, "Fair shares"): a key runs at most
 * one request a turn, so one key's many connections cannot keep the loop to themselves.
 *
 * A page is read and answered synchronously, in a few milliseconds. Without turns, every request
 * that has arrived when the loop polls its sockets runs before the next poll: a key with 12
 * connections kept busy put 12 pages (~26 ms of CPU) ahead of another tenant's request each time
 * (bench/results/noisy-neighbour-2026-12-01.md), and its requests never counted as in progress
 * more than one at a time, so the in-progress cap could not bind. With turns, a request of a key
 * that already ran in this turn waits (its key's queue, first in first out) for the next turn
 * (setImmediate: after the loop has polled the sockets again), where each waiting key's first
 * request runs. It is counted in progress (fair-shares.ts) only once it runs.
 */
export class KeyTurns {
  /** Keys that ran a request in this turn. */
  readonly #ran = new Set<string>();
  /** Requests waiting for a later turn, per key, oldest first. */
  readonly #waiting = new Map<string, (() => void)[]>();
  #turnScheduled = false;

  /**
   * Undefined when a request of `key` may run now; otherwise a promise that resolves in the turn
   * where it may.
   */
  take(key: string): Promise<void> | undefined {
    this.#scheduleTurn();
    if (!this.#ran.has(key) && !this.#waiting.has(key)) {
      this.#ran.add(key);
      return undefined;
    }
    return new Promise((resolve) => {
      const queue = this.#waiting.get(key);
      if (queue) queue.push(resolve);
      else this.#waiting.set(key, [resolve]);
    });
  }

  /** Requests waiting now (tests, metrics). */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiting.values()) count += queue.length;
    return count;
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    setImmediate(() => this.#nextTurn());
  }

  /** A new turn: every waiting key's first request runs (their continuations follow this callback). */
  #nextTurn(): void {
    this.#turnScheduled = false;
    this.#ran.clear();
    for (const [key, queue] of this.#waiting) {
      const next = queue.shift()!;
      if (queue.length === 0) this.#waiting.delete(key);
      this.#ran.add(key);
      next();
    }
    // The keys that ran keep their turn until the next one.
    if (this.#ran.size > 0) this.#scheduleTurn();
  }
}
