/**
 * A seeded uniform [0, 1) stream (mulberry32), for tests and benchmarks that draw random cases or
 * inputs: the same seed gives the same draws on every machine, so a failure can be replayed and a
 * fixture rebuilt identically.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
