import { describe, expect, it } from 'vitest';
import { deriveKey, hashString, Rng, rowId, rowRng } from '../src/seed/prng.ts';

describe('seed PRNG', () => {
  it('is reproducible and stream-separated', () => {
    const a = new Rng(hashString('x'));
    const b = new Rng(hashString('x'));
    const draws = Array.from({ length: 5 }, () => a.u32());
    expect(Array.from({ length: 5 }, () => b.u32())).toEqual(draws);
    expect(deriveKey(1, 'sites')).not.toBe(deriveKey(1, 'services'));
    expect(deriveKey(1, 0)).not.toBe(deriveKey(1, 1));
  });

  it('gives a row id equal to the first uuid of the row stream', () => {
    const key = deriveKey(7, 'sites');
    expect(rowId(key, 12)).toBe(rowRng(key, 12).uuid());
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

  it('makes distinct RFC 4122 v4 uuids and lowercase colours', () => {
    const rng = new Rng(5);
    const ids = new Set(Array.from({ length: 10_000 }, () => rng.uuid()));
    expect(ids.size).toBe(10_000);
    for (const id of [...ids].slice(0, 100))
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rng.hexColor()).toMatch(/^#[0-9a-f]{6}$/);
  });
});
