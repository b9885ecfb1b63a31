import { describe, expect, it } from 'vitest';
import { deriveKey, hashString, Rng } from '../../seed/prng.ts';

describe('seed PRNG', () => {
  it('is reproducible and stream-separated', () => {
    const a = new Rng(hashString('x'));
    const b = new Rng(hashString('x'));
    const draws = Array.from({ length: 5 }, () => a.u32());
    expect(Array.from({ length: 5 }, () => b.u32())).toEqual(draws);
    expect(deriveKey(1, 'sites')).not.toBe(deriveKey(1, 'services'));
    expect(deriveKey(1, 0)).not.toBe(deriveKey(1, 1));
  });

  it('keeps int() within bounds and hits both ends', () => {
    const rng = new Rng(99);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = rng.int(-2, 2);
      expect(v).toBeGreaterThanOrEqual(-2);
      expect(v).toBeLessThanOrEqual(2);
      seen.add(v);
    }
    expect([...seen].sort()).toEqual([-1, -2, 0, 1, 2].sort());
  });

  it('makes lowercase colours', () => {
    const rng = new Rng(5);
    for (let i = 0; i < 100; i++) expect(rng.hexColor()).toMatch(/^#[0-9a-f]{6}$/);
  });
});
