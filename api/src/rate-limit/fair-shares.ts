/**
 * Fair shares of one api process between keys and companies (api/README.md, "Fair shares";
 * docs/security.md): the rate limit bounds how many requests a key sends per window, not how many
 * it keeps open at once, and one key's slow or held requests must not take what other tenants need.
 *
 * - In progress: a key has at most `perKey` authenticated requests in progress at once, and a
 *   company (all the keys that read it) at most `perCompany`.
 * - Held: a key has at most `heldPerKey` change-feed requests held by `wait` at once. A held
 *   request leaves the in-progress count (moveToHeld): long polls have this share of their own and
 *   never fill the in-progress one.
 * - Streams: a key has at most `streamsPerKey` change-feed streams open at once (moveToStream, as a
 *   held request: a stream is open for minutes and never fills the in-progress share).
 *
 * 0 turns a bound off. A Share is released once whatever calls release (the answer sent, the
 * connection gone, the end of a hold): every later call does nothing.
 */

export interface FairShareLimits {
  readonly perKey: number;
  readonly perCompany: number;
  readonly heldPerKey: number;
  readonly streamsPerKey: number;
  /** A key runs at most one request a turn of the event loop (key-turns.ts). */
  readonly turns: boolean;
}

/** Which bound refused a request (the `reason` of pda_api_rate_limited_total). */
export type ShareRefusal =
  | 'in_progress_per_key'
  | 'in_progress_per_company'
  | 'held_per_key'
  | 'streams_per_key';

export interface Share {
  release(): void;
}

/** Counts per id, at most `max` each (0: unbounded, nothing counted). */
class Counts {
  readonly #max: number;
  readonly #counts = new Map<string, number>();

  constructor(max: number) {
    this.#max = max;
  }

  get bounded(): boolean {
    return this.#max > 0;
  }

  full(id: string): boolean {
    return this.#max > 0 && (this.#counts.get(id) ?? 0) >= this.#max;
  }

  add(id: string): void {
    if (this.#max > 0) this.#counts.set(id, (this.#counts.get(id) ?? 0) + 1);
  }

  remove(id: string): void {
    if (this.#max === 0) return;
    const left = (this.#counts.get(id) ?? 1) - 1;
    if (left > 0) this.#counts.set(id, left);
    else this.#counts.delete(id);
  }

  of(id: string): number {
    return this.#counts.get(id) ?? 0;
  }
}

const RELEASED: Share = { release() {} };

export class FairShares {
  readonly #keys: Counts;
  readonly #companies: Counts;
  readonly #held: Counts;
  readonly #streams: Counts;

  constructor(limits: FairShareLimits) {
    this.#keys = new Counts(limits.perKey);
    this.#companies = new Counts(limits.perCompany);
    this.#held = new Counts(limits.heldPerKey);
    this.#streams = new Counts(limits.streamsPerKey);
  }

  /** Counts a request in progress, or says which bound it would pass (then nothing is counted). */
  enter(keyId: string, companyId: string): Share | ShareRefusal {
    if (this.#keys.full(keyId)) return 'in_progress_per_key';
    if (this.#companies.full(companyId)) return 'in_progress_per_company';
    if (!this.#keys.bounded && !this.#companies.bounded) return RELEASED;
    this.#keys.add(keyId);
    this.#companies.add(companyId);
    return once(() => {
      this.#keys.remove(keyId);
      this.#companies.remove(companyId);
    });
  }

  /** Counts a held request of the key, or refuses it (then nothing is counted). */
  hold(keyId: string): Share | ShareRefusal {
    if (this.#held.full(keyId)) return 'held_per_key';
    if (!this.#held.bounded) return RELEASED;
    this.#held.add(keyId);
    return once(() => this.#held.remove(keyId));
  }

  /** Counts an open stream of the key, or refuses it (then nothing is counted). */
  stream(keyId: string): Share | ShareRefusal {
    if (this.#streams.full(keyId)) return 'streams_per_key';
    if (!this.#streams.bounded) return RELEASED;
    this.#streams.add(keyId);
    return once(() => this.#streams.remove(keyId));
  }

  /** What a key has counted now (tests). */
  counts(keyId: string): { inProgress: number; held: number; streams: number } {
    return { inProgress: this.#keys.of(keyId), held: this.#held.of(keyId), streams: this.#streams.of(keyId) };
  }
}

function once(release: () => void): Share {
  let done = false;
  return {
    release() {
      if (done) return;
      done = true;
      release();
    },
  };
}
