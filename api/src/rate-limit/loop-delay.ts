/**
 * When the event loop counts as overloaded (plugins/under-pressure.ts; api/README.md, "Rate limiting
 * and overload"). @fastify/under-pressure 9.2 judged the mean of the last sample alone and read a
 * sample without a recorded turn of the loop as an infinite delay: a process whose start-up held its
 * loop for one sample interval (compiling the routes' schemas on a contended CPU: ~1 s measured in
 * test/writers-split.e2e.test.ts, docs/resilience.md) shed every request of its first second of
 * service with `Retry-After: 10`. Here the delay of a sample is finite (what the loop was held at
 * least), judging starts only once the app is ready, and shedding needs the bound exceeded in
 * `sustainedSamples` samples in a row: one long turn (a start-up, a GC, the CPU taken by other
 * processes for a moment) is over before the decision would act, while a loop that keeps lagging
 * is shed after a few samples.
 */

/** What one sample interval saw: the histogram's figures (milliseconds) and the interval's length. */
export interface LoopDelaySample {
  /** Delays the histogram recorded in the interval (one per turn of its timer, after the first). */
  readonly count: number;
  /** Their mean, ms (NaN without any). */
  readonly meanMs: number;
  /** Time since the previous sample, ms. */
  readonly elapsedMs: number;
}

/**
 * The event-loop delay a sample stands for, ms: the mean recorded delay beyond the histogram's own
 * timer period (as under-pressure computes it); with nothing recorded, the loop made no full turn
 * of that timer in the whole interval, so it was held about as long as the interval lasted.
 */
export function sampleDelayMs(sample: LoopDelaySample, resolutionMs: number): number {
  if (sample.count === 0 || !Number.isFinite(sample.meanMs)) return Math.max(0, sample.elapsedMs);
  return Math.max(0, sample.meanMs - resolutionMs);
}

export interface LoopDelayJudge {
  /** Takes the next sample's delay; true when the process is to be judged overloaded from now on. */
  observe(delayMs: number): boolean;
  /** The verdict of the last observation. */
  readonly overloaded: boolean;
  /** The delay of the last sample, ms (0 before any). */
  readonly delayMs: number;
}

export function loopDelayJudge(options: { maxDelayMs: number; sustainedSamples: number }): LoopDelayJudge {
  const { maxDelayMs, sustainedSamples } = options;
  let overInARow = 0;
  let last = 0;
  return {
    observe(delayMs) {
      last = delayMs;
      overInARow = delayMs > maxDelayMs ? overInARow + 1 : 0;
      return overInARow >= sustainedSamples;
    },
    get overloaded() {
      return overInARow >= sustainedSamples;
    },
    get delayMs() {
      return last;
    },
  };
}

/** The part of node:perf_hooks' IntervalHistogram the monitor reads (a fake in tests). */
export interface DelayHistogram {
  readonly count: number;
  /** Nanoseconds. */
  readonly mean: number;
  reset(): void;
}

/**
 * Reads `histogram` into `judge` once per call of `sample()`. `start()` forgets what was recorded
 * before (the app's own start-up) and opens the first interval.
 */
export function loopDelayMonitor(options: {
  histogram: DelayHistogram;
  judge: LoopDelayJudge;
  resolutionMs: number;
  now: () => number;
}) {
  const { histogram, judge, resolutionMs, now } = options;
  let since: number | undefined;
  return {
    start(): void {
      histogram.reset();
      since = now();
    },
    /** Closes the interval: the verdict for the next one (never overloaded before `start()`). */
    sample(): boolean {
      if (since === undefined) return false;
      const at = now();
      const delay = sampleDelayMs(
        { count: histogram.count, meanMs: histogram.mean / 1e6, elapsedMs: at - since },
        resolutionMs,
      );
      histogram.reset();
      since = at;
      return judge.observe(delay);
    },
  };
}
