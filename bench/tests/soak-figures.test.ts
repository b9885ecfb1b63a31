// The soak's judgement of a figure (bench/pipeline/parts/soak-figures.ts): the slope per process,
// the samples it fits, and the verdict rule stated in every result.
import { describe, expect, test } from 'vitest';
import {
  API_SETTLE_SECONDS,
  FIGURES,
  fittedPoints,
  type Point,
  type SoakSample,
  slopePerSecond,
  summarize,
  verdictOf,
} from '../pipeline/parts/soak-figures.ts';

const line = (from: number, to: number, step: number, value: (t: number) => number, segment = 0): Point[] => {
  const points: Point[] = [];
  for (let t = from; t <= to; t += step) points.push({ t, value: value(t), segment });
  return points;
};

describe('slopePerSecond', () => {
  test('the slope of a straight line, exactly', () => {
    expect(slopePerSecond(line(0, 100, 10, (t) => 5 + 0.25 * t))).toBeCloseTo(0.25, 10);
  });

  test('one intercept per segment: a restart that drops the level is no fall', () => {
    // Two api processes, each growing 0.1/s from its own start level.
    const points = [
      ...line(0, 100, 10, (t) => 200 + 0.1 * t, 1),
      ...line(110, 200, 10, (t) => 80 + 0.1 * (t - 110), 2),
    ];
    expect(slopePerSecond(points)).toBeCloseTo(0.1, 10);
    // Fitted as one segment, the drop reads as a fall.
    expect(slopePerSecond(points.map((p) => ({ ...p, segment: 0 })))).toBeLessThan(0);
  });

  test('null without two distinct times', () => {
    expect(slopePerSecond([{ t: 5, value: 1, segment: 0 }])).toBeNull();
    expect(slopePerSecond([])).toBeNull();
  });
});

describe('verdictOf', () => {
  test('flat: growth over the span within the tolerance, either way', () => {
    expect(
      verdictOf(
        line(0, 600, 10, (t) => 100 + (t % 20 === 0 ? 3 : -3)),
        8,
      ),
    ).toBe('flat');
    expect(
      verdictOf(
        line(0, 600, 10, (t) => 100 - t / 100),
        8,
      ),
    ).toBe('flat');
  });

  test('GROWS: rising beyond the tolerance and still rising over the later half', () => {
    expect(
      verdictOf(
        line(0, 600, 10, (t) => 100 + t / 20),
        8,
      ),
    ).toBe('GROWS');
  });

  test('bounded: it rose and levelled off, or it fell', () => {
    expect(
      verdictOf(
        line(0, 600, 10, (t) => 100 + Math.min(t, 200) / 5),
        8,
      ),
    ).toBe('bounded');
    expect(
      verdictOf(
        line(0, 600, 10, (t) => 200 - t / 5),
        8,
      ),
    ).toBe('bounded');
  });

  test('n/a with fewer than 3 points', () => {
    expect(
      verdictOf(
        line(0, 10, 10, (t) => t),
        1,
      ),
    ).toBe('n/a');
  });
});

const sample = (t: number, apiGeneration: number, value: number): SoakSample => ({
  t,
  at: '',
  apiGeneration,
  values: { api_rss_mb: apiGeneration === 0 ? null : value, ingest_rss_mb: value },
});

describe('fittedPoints', () => {
  const api = FIGURES.find((f) => f.key === 'api_rss_mb')!;
  const ingest = FIGURES.find((f) => f.key === 'ingest_rss_mb')!;
  const samples = [
    sample(0, 1, 1),
    sample(60, 1, 2),
    sample(130, 1, 3),
    sample(140, 0, 4), // the api restarting
    sample(150, 2, 5),
    sample(150 + API_SETTLE_SECONDS, 2, 6),
  ];

  test('after the warm-up only; an api figure also skips its new process until it settled', () => {
    expect(fittedPoints(samples, ingest, 120).map((p) => p.t)).toEqual([130, 140, 150, 180]);
    expect(fittedPoints(samples, api, 120).map((p) => [p.t, p.segment])).toEqual([
      [130, 1],
      [150 + API_SETTLE_SECONDS, 2],
    ]);
  });
});

describe('summarize', () => {
  test('first, last, max over every sample; growth per hour from the fitted ones', () => {
    const samples = Array.from({ length: 31 }, (_, i) => sample(i * 10, 1, 100 + i));
    const rss = summarize(samples, 120).find((s) => s.key === 'ingest_rss_mb')!;
    expect(rss).toMatchObject({ first: 100, last: 130, max: 130, fittedSamples: 19, verdict: 'GROWS' });
    expect(rss.growthPerHour).toBeCloseTo(360, 6);
    // A figure no sample has is n/a, not a zero.
    expect(summarize(samples, 120).find((s) => s.key === 'wal_mb')).toMatchObject({
      first: null,
      growthPerHour: null,
      verdict: 'n/a',
    });
  });
});
