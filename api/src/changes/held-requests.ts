import { ApiError } from '../errors/api-error.ts';

/**
 * The requests of the change feed held by `wait` (docs/decisions/0013-change-feed.md): how the api
 * learns of commits without a query per held request per tick. One timer per company file that
 * has held requests reads the file's change counter (`meta.last_changed_us`, one row) every
 * `tickMs` and wakes every request of that company that saw a lower value: a commit costs each of
 * its held requests one page read, a quiet file one row read per tick whatever the number held.
 *
 * Held requests are bounded (`max`, API_MAX_HELD_REQUESTS): beyond it a request that would be held
 * answers 503 service_unavailable with Retry-After (each key has its own share of them before that:
 * plugins/fair-shares.ts). `close()` (the api shutting down) answers
 * every held request at once (with its empty page) and every later one without holding it.
 */

/** What a company's file says about commits: its generation and its highest change time. */
export interface CommitMark {
  readonly generation: number;
  readonly lastChangedUs: number;
}

/** Why a wait ended: a commit since the mark, its time, the api closing, or the client gone. */
export type WaitOutcome = 'changed' | 'timeout' | 'closing' | 'aborted';

interface Waiter {
  readonly seen: CommitMark;
  readonly done: (outcome: WaitOutcome) => void;
}

interface CompanyWatch {
  readonly waiters: Set<Waiter>;
  readonly timer: NodeJS.Timeout;
}

export interface HeldRequestsOptions {
  /** At most this many requests held at once (0: `wait` is answered at once, never held). */
  readonly max: number;
  /** How often a company file with held requests is checked for commits. */
  readonly tickMs: number;
  /** The file's mark now; throws when the file cannot be read (the held requests then read it). */
  readonly mark: (companyId: string) => CommitMark;
  /** Told of each request refused because `max` are held. */
  readonly onRefused?: () => void;
}

export class HeldRequests {
  readonly #options: HeldRequestsOptions;
  readonly #companies = new Map<string, CompanyWatch>();
  #held = 0;
  #streams = 0;
  #closing = false;

  constructor(options: HeldRequestsOptions) {
    this.#options = options;
  }

  /** Requests held now (the pda_api_held_requests gauge). */
  get held(): number {
    return this.#held;
  }

  /** Change-feed streams open now (the pda_api_open_streams gauge); each also holds a slot. */
  get streams(): number {
    return this.#streams;
  }

  get max(): number {
    return this.#options.max;
  }

  get closing(): boolean {
    return this.#closing;
  }

  /**
   * A slot for one request, for the whole of its holding (`release` it in a finally): 503 when
   * `max` are held already. A request in a closing api gets no slot and is not held.
   */
  acquire(): void {
    if (this.#held >= this.#options.max) {
      this.#options.onRefused?.();
      throw new ApiError(
        'service_unavailable',
        'This process holds as many waiting requests as it may; retry shortly (or without wait).',
        { headers: { 'retry-after': '1' } },
      );
    }
    this.#held++;
  }

  release(): void {
    this.#held--;
  }

  /** A slot for a stream (stream-response.ts), counted apart too; `releaseStream` it once. */
  acquireStream(): void {
    this.acquire();
    this.#streams++;
  }

  releaseStream(): void {
    this.#streams--;
    this.release();
  }

  /**
   * Until the company's file moves past `seen` (a commit), `ms` pass, the api closes or `signal`
   * aborts (the client went away).
   */
  wait(companyId: string, seen: CommitMark, ms: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.#closing) return Promise.resolve('closing');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      let watch = this.#companies.get(companyId);
      if (watch === undefined) {
        const timer = setInterval(() => this.#tick(companyId), this.#options.tickMs);
        timer.unref();
        watch = { waiters: new Set(), timer };
        this.#companies.set(companyId, watch);
      }
      const onAbort = () => waiter.done('aborted');
      const timeout = setTimeout(() => waiter.done('timeout'), ms);
      const waiter: Waiter = {
        seen,
        done: (outcome) => {
          clearTimeout(timeout);
          signal?.removeEventListener('abort', onAbort);
          this.#remove(companyId, waiter);
          resolve(outcome);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      watch.waiters.add(waiter);
    });
  }

  /** Answers every held request now ('closing') and every later wait at once. */
  close(): void {
    this.#closing = true;
    for (const watch of [...this.#companies.values()]) {
      for (const waiter of [...watch.waiters]) waiter.done('closing');
    }
  }

  #tick(companyId: string): void {
    const watch = this.#companies.get(companyId);
    if (watch === undefined) return;
    let mark: CommitMark | undefined;
    try {
      mark = this.#options.mark(companyId);
    } catch {
      mark = undefined; // unreadable now: wake them all, each answers what its read finds
    }
    for (const waiter of [...watch.waiters]) {
      if (
        mark === undefined ||
        mark.generation !== waiter.seen.generation ||
        mark.lastChangedUs !== waiter.seen.lastChangedUs
      ) {
        waiter.done('changed');
      }
    }
  }

  #remove(companyId: string, waiter: Waiter): void {
    const watch = this.#companies.get(companyId);
    if (watch === undefined) return;
    watch.waiters.delete(waiter);
    if (watch.waiters.size === 0) {
      clearInterval(watch.timer);
      this.#companies.delete(companyId);
    }
  }
}
