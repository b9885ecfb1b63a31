import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { LagSnapshot } from '../src/kafka/lag-monitor.ts';
import { CATCH_UP_LOG_INTERVAL_MS, createCatchUpReporter } from '../src/observability/catch-up-reporter.ts';
import { createMetrics } from '../src/observability/metrics.ts';

// What operators see of a catch-up: one 'catching up' line per interval, one 'caught up' line, and
// the two gauges, fed one sample a second like the worker does.

type Line = Record<string, unknown> & { msg: string };

function reporterAt(startMs = 0) {
  const lines: Line[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const metrics = createMetrics();
  let nowMs = startMs;
  const reporter = createCatchUpReporter({ logger, metrics, maxLag: 1000, now: () => nowMs });
  /** One sample a second: `consumed` so far and the lag (undefined: not measured yet). */
  const tick = (second: number, consumed: number, lag: number | undefined) => {
    nowMs = second * 1000;
    metrics.consumedMessages = consumed;
    const snapshot: LagSnapshot | undefined =
      lag === undefined ? undefined : { measured: true, total: lag, partitions: [] };
    reporter.observe(snapshot);
  };
  const gauges = async () => ({
    rate: (await metrics.catchUpEventsPerSecond.get()).values[0]?.value,
    eta: (await metrics.catchUpEtaSeconds.get()).values[0]?.value,
  });
  return { lines, tick, gauges };
}

describe('catch-up reporter', () => {
  it('logs a start-up catch-up at once, then every 10 s, then once caught up; the gauges follow', async () => {
    expect(CATCH_UP_LOG_INTERVAL_MS).toBe(10_000);
    const { lines, tick, gauges } = reporterAt();
    expect(await gauges()).toEqual({ rate: 0, eta: -1 }); // nothing measured: unknown
    // 4,000 events/s through 104,000 events: the first lag poll finds 100,000 left.
    for (let s = 1; s <= 25; s++) tick(s, 4000 * s, 104_000 - 4000 * s);
    expect(lines.map((l) => [l.msg, l.seconds])).toEqual([
      ['catching up', 1],
      ['catching up', 11],
      ['catching up', 21],
    ]);
    expect(lines[0]).toMatchObject({ eventsPerSecond: 4000, lag: 100_000, etaSeconds: 25, events: 4000 });
    expect(lines[2]).toMatchObject({ eventsPerSecond: 4000, lag: 20_000, etaSeconds: 5, events: 84_000 });
    expect(await gauges()).toEqual({ rate: 4000, eta: 1 });
    tick(26, 104_000, 0);
    expect(lines.at(-1)).toMatchObject({
      msg: 'caught up',
      seconds: 26,
      events: 104_000,
      meanEventsPerSecond: 4000,
      lag: 0,
    });
    expect(await gauges()).toEqual({ rate: 4000, eta: 0 });
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.level).toBe(30); // info
  });

  it('a live spike shorter than the interval: gauges only; a longer one: lines from 10 s on', async () => {
    const { lines, tick, gauges } = reporterAt();
    tick(1, 0, 0);
    // 5 s above the bound, drained at 2,000 events/s.
    tick(2, 0, 10_000);
    expect(await gauges()).toEqual({ rate: 0, eta: -1 }); // no progress yet: unknown
    for (let s = 3; s <= 7; s++) tick(s, 2000 * (s - 2), 10_000 - 2000 * (s - 2));
    expect(lines).toEqual([]);
    // A long one: first line 10 s after its start (second 8: the last sample before it).
    tick(8, 10_000, 0);
    for (let s = 9; s <= 30; s++) tick(s, 10_000 + 1000 * (s - 8), 50_000 - 1000 * (s - 8));
    expect(lines.map((l) => [l.msg, l.seconds])).toEqual([
      ['catching up', 10],
      ['catching up', 20],
    ]);
    tick(31, 60_000, 0);
    expect(lines.at(-1)).toMatchObject({ msg: 'caught up', seconds: 23, events: 50_000 });
  });

  it('a start-up load over before the first lag poll: one caught-up line', () => {
    const { lines, tick } = reporterAt();
    tick(2, 5000, 0);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'caught up',
        seconds: 2,
        events: 5000,
        meanEventsPerSecond: 2500,
        lag: 0,
      }),
    ]);
  });
});
