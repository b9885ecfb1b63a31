import { describe, expect, it } from 'vitest';
import {
  appliedPartitions,
  companyPartition,
  javaStringHash,
  OwnershipError,
  ownershipWriter,
  parseOwnership,
  servingWriter,
} from '../src/model/ownership.ts';

// Printed by Java 17 (String.hashCode, then PartitionRouting's `& MAX_VALUE` and modulo) from a
// one-off `java H.java <ids…>`: the connector's side of the agreement.
const JAVA_VECTORS = [
  { text: '00000000-0000-0000-0000-000000000001', hash: 1428967489, mod12: 1, mod7: 5 },
  { text: '8d2f3c4e-1b2a-4c3d-9e8f-0a1b2c3d4e5f', hash: -260552787, mod12: 5, mod7: 4 },
  { text: 'ffffffff-ffff-ffff-ffff-ffffffffffff', hash: 1066837568, mod12: 8, mod7: 6 },
  { text: '', hash: 0, mod12: 0, mod7: 0 },
  { text: 'é☃𝄞', hash: 18065188, mod12: 4, mod7: 1 },
];

describe('companyPartition', () => {
  it.each(JAVA_VECTORS)('agrees with Java for $text', ({ text, hash, mod12, mod7 }) => {
    expect(javaStringHash(text)).toBe(hash);
    expect(companyPartition(text, 12)).toBe(mod12);
    expect(companyPartition(text, 7)).toBe(mod7);
  });

  it('spreads random uuids over every partition', () => {
    const counts = new Array(12).fill(0);
    for (let i = 0; i < 12_000; i++) counts[companyPartition(crypto.randomUUID(), 12)]++;
    for (const count of counts) expect(count).toBeGreaterThan(700);
  });
});

const TWO = JSON.stringify({
  partitions: 4,
  writers: [
    { name: 'a', api: 'http://a.internal:3000/', serves: [0, 2] },
    { name: 'b', api: 'http://b.internal:3000', serves: [1, 3], builds: [] },
  ],
});

describe('parseOwnership', () => {
  it('reads writers, trims the api URL and routes a company to its partition', () => {
    const ownership = parseOwnership(TWO);
    expect(ownership.writers.map((w) => w.api)).toEqual(['http://a.internal:3000', 'http://b.internal:3000']);
    const id = JAVA_VECTORS[0]?.text as string; // partition 1 of 4
    expect(companyPartition(id, 4)).toBe(1);
    expect(servingWriter(ownership, id).name).toBe('b');
    expect([...appliedPartitions(ownershipWriter(ownership, 'a'))]).toEqual([0, 2]);
  });

  it('applies what a writer builds as well as what it serves', () => {
    const ownership = parseOwnership(
      JSON.stringify({
        partitions: 2,
        writers: [
          { name: 'a', api: 'http://a:1', serves: [0, 1] },
          { name: 'b', api: 'http://b:1', serves: [], builds: [1] },
        ],
      }),
    );
    expect([...appliedPartitions(ownershipWriter(ownership, 'b'))]).toEqual([1]);
    expect(servingWriter(ownership, JAVA_VECTORS[0]?.text as string).name).toBe('a');
  });

  const bad: [string, unknown, RegExp][] = [
    ['not JSON', '{', /not JSON/],
    ['no partitions', { writers: [] }, /"partitions" must be/],
    [
      'a partition served twice',
      {
        partitions: 2,
        writers: [
          { name: 'a', api: 'http://a', serves: [0, 1] },
          { name: 'b', api: 'http://b', serves: [1] },
        ],
      },
      /served by both "a" and "b"/,
    ],
    [
      'a partition nobody serves',
      { partitions: 3, writers: [{ name: 'a', api: 'http://a', serves: [0, 1] }] },
      /no writer serves partition\(s\) 2/,
    ],
    [
      'out of range',
      { partitions: 2, writers: [{ name: 'a', api: 'http://a', serves: [0, 2] }] },
      /holds 2: expected an integer from 0 to 1/,
    ],
    [
      'not a URL',
      { partitions: 1, writers: [{ name: 'a', api: 'a:3000', serves: [0] }] },
      /api must be an http\(s\) URL/,
    ],
    [
      'same name twice',
      {
        partitions: 1,
        writers: [
          { name: 'a', api: 'http://a', serves: [0] },
          { name: 'a', api: 'http://b', serves: [] },
        ],
      },
      /two writers are named "a"/,
    ],
    [
      'serves and builds one partition',
      { partitions: 1, writers: [{ name: 'a', api: 'http://a', serves: [0], builds: [0] }] },
      /both serves and builds partition 0/,
    ],
  ];
  it.each(bad)('refuses %s with one line', (_, value, message) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    expect(() => parseOwnership(text, 'own.json')).toThrow(OwnershipError);
    expect(() => parseOwnership(text, 'own.json')).toThrow(message);
  });

  it('names the writers it knows when asked for another', () => {
    expect(() => ownershipWriter(parseOwnership(TWO), 'c')).toThrow(
      /writer "c" is not in the ownership file \(it names "a", "b"\)/,
    );
  });
});
