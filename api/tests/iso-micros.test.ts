import { seededRandom } from '@pda/projections/testing';
import { describe, expect, test } from 'vitest';
import { isoMicros } from '../src/resources/iso-micros.ts';

// isoMicros keeps the last second's `YYYY-MM-DDTHH:MM:SS.` (the change feed formats one time per
// item, mostly within one second): its text is the general form's (one Date per call) for every
// value, in any order of calls.

const reference = (us: number) => {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
};

describe('isoMicros', () => {
  test('edges: 0 µs, .999999, year and day boundaries, the epoch, before it', () => {
    const boundaries = [
      0,
      Date.UTC(2026, 0, 1) * 1000,
      Date.UTC(2025, 11, 31, 23, 59, 59) * 1000,
      Date.UTC(2024, 1, 29) * 1000,
      Date.UTC(9999, 11, 31, 23, 59, 59) * 1000,
      Date.UTC(2000, 0, 1) * 1000,
      -1_000_000,
    ];
    const values = boundaries.flatMap((at) => [
      at - 1,
      at,
      at + 1,
      at + 999,
      at + 1000,
      at + 999_999,
      at + 1_000_000,
    ]);
    expect(isoMicros(Date.UTC(2026, 0, 1) * 1000)).toBe('2026-01-01T00:00:00.000000Z');
    expect(isoMicros(Date.UTC(2026, 0, 1) * 1000 - 1)).toBe('2025-12-31T23:59:59.999999Z');
    for (const us of [...values, ...values.toReversed()]) expect(isoMicros(us)).toBe(reference(us));
  });

  test('random values, runs within one second and jumps between seconds: the reference text', () => {
    const next = seededRandom(11);
    let us = Date.UTC(2026, 10, 27) * 1000;
    for (let n = 0; n < 20_000; n++) {
      const step = next();
      if (step < 0.6) us += Math.floor(next() * 2000);
      else if (step < 0.8) us += Math.floor(next() * 3_000_000);
      else if (step < 0.9) us = Math.floor(next() * 4_102_444_800_000_000);
      else us -= Math.floor(next() * 1_500_000);
      expect(isoMicros(us)).toBe(reference(us));
    }
  });

  test('beyond the safe integers (years outside 0000..9999) and fractions: the general form', () => {
    const second = Date.UTC(2026, 10, 27) * 1000;
    for (const us of [253_402_300_800_000_000, -62_198_755_200_000_000, second, second + 1.5, 2.25]) {
      expect(isoMicros(us)).toBe(reference(us));
    }
  });
});
