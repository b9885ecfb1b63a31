/**
 * Who follows what in bench/api/followers.ts: each follower's client address on loopback, key,
 * company and kind (long poll or live stream), and the percentiles of its latencies. Pure, so
 * bench/tests/followers-plan.test.ts can hold it.
 */

export type FollowerKind = 'long-poll' | 'live-stream';

export interface FollowerPlan {
  readonly index: number;
  /** The loopback address its socket binds to (127.0.0.x): the api counts connections per address. */
  readonly localAddress: string;
  /** Index into the run's keys; the key reads one company. */
  readonly key: number;
  readonly company: number;
  readonly kind: FollowerKind;
}

export interface PlanOptions {
  readonly followers: number;
  readonly keys: number;
  readonly companies: number;
  /** The first and last x of 127.0.0.x (127.0.0.1 is left to everything else on the machine). */
  readonly firstAddress: number;
  readonly lastAddress: number;
}

/** The address of follower `index`: round-robin over first..last, so each address holds ⌈N ÷ span⌉ at most. */
export function spreadAddress(index: number, firstAddress: number, lastAddress: number): string {
  if (firstAddress < 1 || lastAddress > 254 || lastAddress < firstAddress)
    throw new Error(`addresses 127.0.0.${firstAddress}..${lastAddress}: want 1 ≤ first ≤ last ≤ 254`);
  return `127.0.0.${firstAddress + (index % (lastAddress - firstAddress + 1))}`;
}

/** Key k reads company k mod companies (so every company has keys/companies keys). */
export const companyOfKey = (key: number, companies: number) => key % companies;

/**
 * Follower i takes key i mod keys; the kind alternates per round of keys, so every key (and every
 * company) has both kinds, half each when N is a multiple of 2 × keys.
 */
export function planFollowers(options: PlanOptions): FollowerPlan[] {
  if (options.keys < options.companies)
    throw new Error(
      `${options.keys} keys for ${options.companies} companies: want a key per company at least`,
    );
  return Array.from({ length: options.followers }, (_, index) => {
    const key = index % options.keys;
    return {
      index,
      localAddress: spreadAddress(index, options.firstAddress, options.lastAddress),
      key,
      company: companyOfKey(key, options.companies),
      kind: Math.floor(index / options.keys) % 2 === 0 ? 'long-poll' : 'live-stream',
    };
  });
}

/** The most followers any one address holds (against API_MAX_CONNECTIONS_PER_ADDRESS). */
export function mostPerAddress(plan: readonly FollowerPlan[]): number {
  const counts = new Map<string, number>();
  for (const f of plan) counts.set(f.localAddress, (counts.get(f.localAddress) ?? 0) + 1);
  return Math.max(0, ...counts.values());
}

/** Nearest-rank percentile of ascending `sorted` (p in 0..100); null when empty. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? null;
}

export interface LatencySummary {
  readonly samples: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

export function summarize(latenciesMs: readonly number[]): LatencySummary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (x: number | null) => (x === null ? null : Math.round(x));
  return {
    samples: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? null),
  };
}
