import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, test } from 'vitest';
import {
  type DelayHistogram,
  loopDelayJudge,
  loopDelayMonitor,
  sampleDelayMs,
} from '../src/rate-limit/loop-delay.ts';

/**
 * When the event loop counts as overloaded (rate-limit/loop-delay.ts; api/README.md, "Rate
 * limiting and overload"), fed synthetic samples: the sequences are the ones measured in
 * test/writers-split.e2e.test.ts (docs/resilience.md, writers split), where a new writer's api
 * shed its first second of requests because its start-up had held the loop for one interval.
 */

const judgeOf = (maxDelayMs = 1_000, sustainedSamples = 3) =>
  loopDelayJudge({ maxDelayMs, sustainedSamples });
/** One character per sample: `x` overloaded (shed from then on), `.` served. */
const verdicts = (delays: number[], judge = judgeOf()) =>
  delays.map((d) => (judge.observe(d) ? 'x' : '.')).join('');

describe('the delay a sample stands for', () => {
  test('the mean recorded delay beyond the histogram timer period', () => {
    expect(sampleDelayMs({ count: 98, meanMs: 12.5, elapsedMs: 1_000 }, 10)).toBe(2.5);
    expect(sampleDelayMs({ count: 90, meanMs: 9.8, elapsedMs: 1_000 }, 10)).toBe(0);
  });

  test('an interval without a recorded turn is as long as the interval, not infinite', () => {
    // Measured: B's api, histogram enabled, then 991 ms compiling route schemas on a contended CPU.
    expect(sampleDelayMs({ count: 0, meanMs: Number.NaN, elapsedMs: 1_004 }, 10)).toBe(1_004);
  });

  test('a real histogram with no turn of the loop since the last sample (its mean is NaN): the interval', () => {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    let clock = 0;
    const judge = judgeOf(0, 1);
    const monitor = loopDelayMonitor({ histogram, judge, resolutionMs: 10, now: () => clock });
    monitor.start();
    // Still synchronous: no timer has run, so nothing is recorded, as in a loop held by a start-up.
    clock = 1_000;
    expect(histogram.count).toBe(0);
    expect(monitor.sample()).toBe(true);
    expect(judge.delayMs).toBe(1_000);
    histogram.disable();
  });
});

describe('overloaded only when the delay is sustained', () => {
  test("a start-up's one interval without a turn, then a free loop: nothing shed", () => {
    expect(verdicts([1_004, 1.2, 0.9, 2.5])).toBe('....');
  });

  test('one long turn however long (a GC, the CPU taken for a moment): nothing shed', () => {
    expect(verdicts([0.3, 5_000, 0.2, 77.8, 0.5])).toBe('.....');
  });

  test('over the bound in every one of `sustainedSamples` samples in a row: shed, until a sample is under it', () => {
    expect(verdicts([1_200, 1_100, 1_500, 1_300, 40, 1_200])).toBe('..xx..');
  });

  test('a sample under the bound starts the count again', () => {
    expect(verdicts([1_200, 1_100, 900, 1_200, 1_100, 1_050])).toBe('.....x');
  });

  test('sustainedSamples 1 judges the last sample alone; the bound itself is not over it', () => {
    expect(verdicts([1_000, 1_001, 3], judgeOf(1_000, 1))).toBe('.x.');
  });

  test('the verdict and the last delay stay readable between samples', () => {
    const judge = judgeOf(100, 2);
    verdicts([150, 160], judge);
    expect({ overloaded: judge.overloaded, delayMs: judge.delayMs }).toEqual({
      overloaded: true,
      delayMs: 160,
    });
  });
});

describe('the monitor', () => {
  const fakeHistogram = (samples: { count: number; meanMs: number }[]) => {
    let i = 0;
    let resets = 0;
    const histogram: DelayHistogram & { resets(): number; next(): void } = {
      get count() {
        return samples[i]?.count ?? 0;
      },
      get mean() {
        return (samples[i]?.meanMs ?? Number.NaN) * 1e6;
      },
      reset() {
        resets += 1;
      },
      resets: () => resets,
      next: () => {
        i += 1;
      },
    };
    return histogram;
  };

  test('judges nothing before start(), and start() forgets what the start-up recorded', () => {
    // The start-up's interval (nothing recorded) is never read: start() resets it.
    const histogram = fakeHistogram([
      { count: 0, meanMs: Number.NaN },
      { count: 95, meanMs: 10.4 },
    ]);
    let clock = 0;
    const judge = judgeOf(1_000, 1);
    const monitor = loopDelayMonitor({ histogram, judge, resolutionMs: 10, now: () => clock });
    clock = 1_004;
    expect(monitor.sample()).toBe(false);
    expect(histogram.resets()).toBe(0);
    monitor.start();
    expect(histogram.resets()).toBe(1);
    histogram.next();
    clock = 2_004;
    expect(monitor.sample()).toBe(false);
    expect(judge.delayMs).toBeCloseTo(0.4);
    expect(histogram.resets()).toBe(2);
  });

  test('each interval is measured from the previous sample', () => {
    const histogram = fakeHistogram([{ count: 0, meanMs: Number.NaN }]);
    let clock = 500;
    const judge = judgeOf(1_000, 1);
    const monitor = loopDelayMonitor({ histogram, judge, resolutionMs: 10, now: () => clock });
    monitor.start();
    clock = 1_400;
    expect(monitor.sample()).toBe(false);
    expect(judge.delayMs).toBe(900);
    clock = 2_650;
    expect(monitor.sample()).toBe(true);
    expect(judge.delayMs).toBe(1_250);
  });
});
