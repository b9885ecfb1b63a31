import { describe, expect, it } from 'vitest';
import { CatchUpProgress, type CatchUpReading } from '../src/observability/catch-up-progress.ts';

// The catch-up arithmetic on synthetic samples, one a second like the worker's: exact rates and ETAs.

const SECOND = 1000;

/** Feeds (second, consumed, lag) samples in order; answers the last reading. */
function feed(progress: CatchUpProgress, samples: [number, number, number | undefined][]): CatchUpReading {
  let last: CatchUpReading | undefined;
  for (const [s, consumed, lag] of samples) last = progress.observe({ nowMs: s * SECOND, consumed, lag });
  return last as CatchUpReading;
}

/** Seconds from..to (inclusive) of a steady stream: consumed = c0 + rate·(s − from), lag likewise down. */
function steady(from: number, to: number, c0: number, lag0: number, rate: number, lagRate = rate) {
  const samples: [number, number, number][] = [];
  for (let s = from; s <= to; s++) samples.push([s, c0 + rate * (s - from), lag0 - lagRate * (s - from)]);
  return samples;
}

const progress = () => new CatchUpProgress({ windowMs: 30 * SECOND, maxLag: 1000 });

describe('catch-up progress', () => {
  it('a steady rate: events/s, ETA = lag ÷ rate, then the whole catch-up when it ends', () => {
    const p = progress();
    // The start (nothing measured yet), then 2,000 events/s against a lag of 100,000.
    p.observe({ nowMs: 0, consumed: 0, lag: undefined });
    expect(feed(p, steady(1, 10, 2000, 98_000, 2000))).toMatchObject({
      eventsPerSecond: 2000,
      lag: 80_000,
      etaSeconds: 40,
      catchingUp: true,
      current: { startedAtMs: 0, seconds: 10, events: 20_000, meanEventsPerSecond: 2000, atStart: true },
    });
    expect(feed(p, steady(11, 40, 22_000, 78_000, 2000))).toMatchObject({
      eventsPerSecond: 2000,
      lag: 20_000,
      etaSeconds: 10,
      catchingUp: true,
    });
    const done = feed(p, steady(41, 50, 82_000, 18_000, 2000));
    expect(done).toMatchObject({ eventsPerSecond: 2000, lag: 0, etaSeconds: 0, catchingUp: false });
    expect(done.ended).toEqual({
      startedAtMs: 0,
      seconds: 50,
      events: 100_000,
      meanEventsPerSecond: 2000,
      atStart: true,
    });
    expect(done.current).toBeUndefined();
  });

  it('a rate change shows fully once the old rate is out of the 30 s window; a start-up pause too', () => {
    const p = progress();
    // 5 s of nothing (joining the group), then 1,000 events/s for 30 s, then 3,000 events/s.
    feed(p, steady(0, 5, 0, 300_000, 0));
    expect(feed(p, steady(6, 10, 1000, 299_000, 1000))).toMatchObject({ eventsPerSecond: 500 }); // 5,000 in 10 s
    expect(feed(p, steady(11, 35, 6000, 294_000, 1000))).toMatchObject({
      eventsPerSecond: 1000, // the pause is out of the window
      lag: 270_000,
      etaSeconds: 270,
    });
    expect(feed(p, steady(36, 50, 33_000, 267_000, 3000))).toMatchObject({
      eventsPerSecond: 2000, // 15 s at 1,000 and 15 s at 3,000
      lag: 225_000,
      etaSeconds: 112.5,
    });
    expect(feed(p, steady(51, 65, 78_000, 222_000, 3000))).toMatchObject({
      eventsPerSecond: 3000,
      lag: 180_000,
      etaSeconds: 60,
      catchingUp: true,
    });
  });

  it('a zero rate: 0 events/s, no ETA, still catching up', () => {
    const p = progress();
    expect(feed(p, steady(0, 20, 0, 5000, 0))).toEqual({
      eventsPerSecond: 0,
      lag: 5000,
      etaSeconds: null,
      catchingUp: true,
      current: { startedAtMs: 0, seconds: 20, events: 0, meanEventsPerSecond: 0, atStart: true },
    });
  });

  it('a lag growing faster than events are applied: the rate, but no ETA', () => {
    const p = progress();
    // 1,000 applied per second while the lag grows by 500 per second.
    expect(feed(p, steady(0, 20, 0, 10_000, 1000, -500))).toMatchObject({
      eventsPerSecond: 1000,
      lag: 20_000,
      etaSeconds: null,
      catchingUp: true,
    });
    // The same lag at both ends of the window is no progress either.
    expect(feed(p, steady(21, 60, 21_000, 20_000, 1000, 0))).toMatchObject({
      eventsPerSecond: 1000,
      etaSeconds: null,
    });
  });

  it('an unmeasured lag: a rate, no lag, no ETA, and no catch-up decided', () => {
    const p = progress();
    expect(
      feed(p, [
        [0, 0, undefined],
        [2, 300, undefined],
      ]),
    ).toEqual({
      eventsPerSecond: 150,
      lag: null,
      etaSeconds: null,
      catchingUp: false,
    });
  });

  it('a start-up load over before the first lag poll is found, and ends on the same sample', () => {
    const p = progress();
    p.observe({ nowMs: 0, consumed: 0, lag: undefined });
    const reading = p.observe({ nowMs: 1500, consumed: 3000, lag: 0 });
    expect(reading).toMatchObject({ catchingUp: false, etaSeconds: 0 });
    expect(reading.ended).toEqual({
      startedAtMs: 0,
      seconds: 1.5,
      events: 3000,
      meanEventsPerSecond: 2000,
      atStart: true,
    });
  });

  it('a start within INGEST_READY_MAX_LAG is no catch-up', () => {
    const p = progress();
    p.observe({ nowMs: 0, consumed: 0, lag: undefined });
    const reading = p.observe({ nowMs: 1000, consumed: 600, lag: 400 });
    expect(reading.catchingUp).toBe(false);
    expect(reading.ended).toBeUndefined();
  });

  it('a later spike starts at the last sample before it and ends when the lag is back within the bound', () => {
    const p = progress();
    feed(p, steady(0, 10, 0, 0, 100, 0));
    // At second 11 the lag is 6,000 (a bulk update), drained at 1,000 events/s.
    const spike = feed(p, steady(11, 15, 1100, 6000, 1000));
    expect(spike.current).toEqual({
      startedAtMs: 10 * SECOND,
      seconds: 5,
      events: 4100,
      meanEventsPerSecond: 820,
      atStart: false,
    });
    const over = p.observe({ nowMs: 16 * SECOND, consumed: 6100, lag: 1000 });
    expect(over.catchingUp).toBe(false);
    expect(over.ended).toMatchObject({ seconds: 6, events: 5100, atStart: false });
  });
});
