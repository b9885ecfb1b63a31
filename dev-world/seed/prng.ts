// Deterministic, counter-based randomness for the seed generator.
//
// Every row gets its own small PRNG derived from (seed, company, table, row index), so
// - the same seed gives the same rows on every run and machine;
// - a row can be rebuilt without generating the rows before it, and changing --sites does not
//   change the services.
// Ids do not come from here: a 32-bit key is too small for unique ids (ids.ts).
// sfc32 (Chris Doty-Humphrey's small fast counter) passes PractRand and needs only 32-bit integer
// math, which keeps generation far cheaper than the database insert.

/** murmur3's 32-bit finaliser: a good avalanche for combining small integers. */
function fmix32(h: number): number {
  let x = h >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** FNV-1a over UTF-16 code units, finalised: turns a seed text or a table name into 32 bits. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** Combines a parent stream key with a part (an index or a name) into a child stream key. */
export function deriveKey(parent: number, part: number | string): number {
  const p = typeof part === 'string' ? hashString(part) : fmix32(part + 0x9e3779b9);
  return fmix32((parent ^ Math.imul(p, 0x27d4eb2d)) + 0x165667b1);
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(key: number) {
    this.a = fmix32(key + 0x6a09e667);
    this.b = fmix32(key + 0xbb67ae85);
    this.c = fmix32(key + 0x3c6ef372);
    this.d = 1;
    // Discard the first outputs so that neighbouring keys are decorrelated.
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.float() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.float() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  /** `#rrggbb`, lowercase as the services.color CHECK requires. */
  hexColor(): string {
    return `#${(this.u32() & 0xffffff).toString(16).padStart(6, '0')}`;
  }
}

/** The PRNG of one row: `rowRng(tableKey, i)`. */
export function rowRng(tableKey: number, index: number): Rng {
  return new Rng(deriveKey(tableKey, index));
}
