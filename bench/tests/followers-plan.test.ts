import { describe, expect, it } from 'vitest';
import {
  mostPerAddress,
  percentile,
  planFollowers,
  spreadAddress,
  summarize,
} from '../api/parts/followers-plan.ts';

describe('spreadAddress', () => {
  it('goes round first..last and starts again', () => {
    expect([0, 1, 2, 3].map((i) => spreadAddress(i, 2, 4))).toEqual([
      '127.0.0.2',
      '127.0.0.3',
      '127.0.0.4',
      '127.0.0.2',
    ]);
  });

  it.each([
    [0, 10],
    [2, 255],
    [5, 4],
  ])('refuses 127.0.0.%i..%i', (first, last) => {
    expect(() => spreadAddress(0, first, last)).toThrow(/want 1 ≤ first ≤ last ≤ 254/);
  });
});

describe('planFollowers', () => {
  const plan = planFollowers({ followers: 5000, keys: 20, companies: 10, firstAddress: 2, lastAddress: 250 });

  it('keeps every address under the per-address cap of 64 connections at N = 5000', () => {
    expect(mostPerAddress(plan)).toBe(Math.ceil(5000 / 249));
  });

  it('gives every key both kinds, half each, and each key its one company', () => {
    for (let key = 0; key < 20; key++) {
      const ofKey = plan.filter((f) => f.key === key);
      expect(ofKey).toHaveLength(250);
      expect(ofKey.filter((f) => f.kind === 'long-poll')).toHaveLength(125);
      expect(new Set(ofKey.map((f) => f.company))).toEqual(new Set([key % 10]));
    }
  });

  it('refuses fewer keys than companies (a company nobody follows)', () => {
    expect(() =>
      planFollowers({ followers: 10, keys: 5, companies: 10, firstAddress: 2, lastAddress: 3 }),
    ).toThrow(/want a key per company/);
  });
});

describe('percentile and summarize', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('is the nearest rank', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it('sorts what it is given and rounds to whole milliseconds', () => {
    expect(summarize([30.4, 10.6, 20.2])).toEqual({ samples: 3, p50Ms: 20, p99Ms: 30, maxMs: 30 });
    expect(summarize([])).toEqual({ samples: 0, p50Ms: null, p99Ms: null, maxMs: null });
  });
});
