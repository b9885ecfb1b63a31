/**
 * The compiled row decoder's fast paths (src/decode/compile-row-decoder.ts) give exactly what the generic
 * value decoder gives, and fall back to it for everything else; the Avro change reader (only what a
 * Change needs, writer-schemas.ts) reads the same `after`, position and op as the whole record, for
 * every captured Avro event.
 */
import { describe, expect, it } from 'vitest';
import type { ColumnType } from '../src/decode/column-type.ts';
import { compileRowDecoder } from '../src/decode/compile-row-decoder.ts';
import { decimalFromBytes, formatScaled, unscaledFromBytes } from '../src/decode/decimal.ts';
import { decodeValue, type ValueOptions } from '../src/decode/decode-value.ts';
import { DecodeError } from '../src/decode/errors.ts';
import { readAvro, schemaIdOf, UNAVAILABLE_PLACEHOLDER } from '../src/decode/index.ts';
import { isCanonicalUtc, isoFromZonedString } from '../src/decode/time.ts';
import { avroFixture } from './support/fixtures.ts';

const options: ValueOptions = { bareDecimalMode: 'precise' };

/** The generic decoder's answer for one value, or its error message. */
function generic(value: unknown, type: ColumnType): unknown {
  try {
    return decodeValue(value, type, options);
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function compiled(value: unknown, type: ColumnType): unknown {
  try {
    const { row, unavailable } = compileRowDecoder(new Map([['c', type]]), options)({ c: value });
    return unavailable.length > 0 ? 'unavailable' : row.c;
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return { error: error.message.replace(/^column 'c': /, '') };
  }
}

const bytes = (...b: number[]) => Uint8Array.from(b);
const cases: [string, ColumnType, unknown][] = [
  ['uuid lower', { kind: 'uuid' }, '0b7e5f1c-3f0a-4d2b-9c1e-2a9f0e4d5c6b'],
  ['uuid upper', { kind: 'uuid' }, '0B7E5F1C-3F0A-4D2B-9C1E-2A9F0E4D5C6B'],
  ['uuid malformed', { kind: 'uuid' }, '0b7e5f1c-3f0a-4d2b-9c1e-2a9f0e4d5c6'],
  ['uuid with g', { kind: 'uuid' }, '0b7e5f1c-3f0a-4d2b-9c1e-2a9f0e4d5c6g'],
  ['timestamp canonical', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.123456Z'],
  ['timestamp 3 digits', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.123Z'],
  ['timestamp no fraction', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01Z'],
  ['timestamp 9 digits', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.123456789Z'],
  ['timestamp dot only', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.Z'],
  ['timestamp 10 digits', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.1234567891Z'],
  ['timestamp lowercase z', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.5z'],
  ['timestamp offset', { kind: 'zoned-timestamp' }, '2026-01-31T12:00:01.123456+05:00'],
  ['timestamp Feb 30', { kind: 'zoned-timestamp' }, '2026-02-30T07:00:01.123456Z'],
  ['timestamp hour 24', { kind: 'zoned-timestamp' }, '2026-01-31T24:00:01.123456Z'],
  ['timestamp year 0', { kind: 'zoned-timestamp' }, '0000-01-31T07:00:01.123456Z'],
  ['timestamp letter', { kind: 'zoned-timestamp' }, '2026-01-31T07:00:01.12345xZ'],
  ['timestamp infinity', { kind: 'zoned-timestamp' }, 'infinity'],
  ['int', { kind: 'int' }, 42],
  ['int negative', { kind: 'int' }, -7],
  ['int fraction', { kind: 'int' }, 1.5],
  ['int bigint', { kind: 'int' }, 2n ** 60n],
  ['decimal 0.01', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes(0x01)],
  ['decimal -0.01', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes(0xff)],
  ['decimal zero', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes(0x00)],
  ['decimal scale 0', { kind: 'decimal', encoding: 'precise', scale: 0 }, bytes(0x80, 0x00)],
  ['decimal scale 6', { kind: 'decimal', encoding: 'precise', scale: 6 }, bytes(0xfd, 0x4f, 0x3c, 0x2a)],
  [
    'decimal 6 bytes max',
    { kind: 'decimal', encoding: 'precise', scale: 2 },
    bytes(0x7f, 255, 255, 255, 255, 255),
  ],
  ['decimal 6 bytes min', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes(0x80, 0, 0, 0, 0, 0)],
  ['decimal 7 bytes', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes(0x80, 0, 0, 0, 0, 0, 1)],
  ['decimal empty', { kind: 'decimal', encoding: 'precise', scale: 2 }, bytes()],
  ['decimal base64', { kind: 'decimal', encoding: 'precise', scale: 2 }, 'AQ=='],
  ['decimal no scale', { kind: 'decimal', encoding: 'precise', scale: undefined }, bytes(1)],
  ['plain text', { kind: 'plain' }, 'Lot 1'],
  ['plain number', { kind: 'plain' }, 3.5],
  ['plain bytes', { kind: 'plain' }, bytes(1, 2, 3)],
  ['array', { kind: 'array', items: { kind: 'plain' } }, ['a', 'b']],
];

describe('compiled row decoder', () => {
  it.each(cases)('%s: the same as the generic decoder', (_name, type, value) => {
    expect(compiled(value, type)).toEqual(generic(value, type));
  });

  it.each([
    ['text', { kind: 'plain' } as ColumnType, UNAVAILABLE_PLACEHOLDER],
    ['bytes', { kind: 'plain' } as ColumnType, Buffer.from(UNAVAILABLE_PLACEHOLDER).toString('base64')],
    ['uuid', { kind: 'uuid' } as ColumnType, UNAVAILABLE_PLACEHOLDER],
    ['timestamp', { kind: 'zoned-timestamp' } as ColumnType, UNAVAILABLE_PLACEHOLDER],
    [
      'Avro decimal',
      { kind: 'decimal', encoding: 'precise', scale: 2 } as ColumnType,
      Buffer.from(UNAVAILABLE_PLACEHOLDER),
    ],
    ['array', { kind: 'array', items: { kind: 'plain' } } as ColumnType, [UNAVAILABLE_PLACEHOLDER]],
  ])('the placeholder in a %s column leaves the column out', (_name, type, value) => {
    expect(compiled(value, type)).toBe('unavailable');
  });

  it('columns out of the schema order, and unknown ones, still get their types', () => {
    const decode = compileRowDecoder(
      new Map<string, ColumnType>([
        ['id', { kind: 'uuid' }],
        ['area', { kind: 'decimal', encoding: 'precise', scale: 2 }],
      ]),
      options,
    );
    const row = decode({ extra: 'x', area: bytes(0x04, 0xd2), id: 'AAAAAAAA-0000-0000-0000-000000000000' });
    expect(row.row).toEqual({ extra: 'x', area: '12.34', id: 'aaaaaaaa-0000-0000-0000-000000000000' });
  });

  it('fixed-shape rows (Avro): the same rows; the placeholder and errors fall back to the loop', () => {
    const types = new Map<string, ColumnType>([
      ['id', { kind: 'uuid' }],
      ['notes', { kind: 'plain' }],
      ['at', { kind: 'zoned-timestamp' }],
    ]);
    const fixed = compileRowDecoder(types, options, ['id', 'notes', 'at']);
    const loop = compileRowDecoder(types, options);
    const rows = [
      { id: 'aaaaaaaa-0000-0000-0000-000000000000', notes: 'n', at: '2026-01-31T07:00:01Z' },
      { id: 'aaaaaaaa-0000-0000-0000-000000000000', notes: UNAVAILABLE_PLACEHOLDER, at: null },
    ];
    for (const raw of rows) expect(fixed(raw)).toEqual(loop(raw));
    expect(fixed(rows[1] as Record<string, unknown>)).toEqual({
      row: { id: 'aaaaaaaa-0000-0000-0000-000000000000', at: null },
      unavailable: ['notes'],
    });
    expect(() => fixed({ id: 'nope', notes: 'n', at: null })).toThrow("column 'id': malformed uuid 'nope'");
  });

  it('small decimals by number equal the BigInt path for every byte length and sign', () => {
    for (let n = 1; n <= 6; n++) {
      for (const first of [0x00, 0x01, 0x7f, 0x80, 0xff]) {
        const b = Uint8Array.from({ length: n }, (_, i) => (i === 0 ? first : (i * 37 + n) & 0xff));
        for (const scale of [0, 1, 2, 6, 12, 20]) {
          expect(decimalFromBytes(b, scale)).toBe(formatScaled(unscaledFromBytes(b), scale));
        }
      }
    }
  });

  it('a canonical UTC timestamp is returned as it came', () => {
    const text = '2024-02-29T23:59:59.999999Z';
    expect(isCanonicalUtc(text)).toBe(true);
    expect(isoFromZonedString(text)).toBe(text);
    expect(isCanonicalUtc('2023-02-29T23:59:59.999999Z')).toBe(false);
  });
});

describe('the Avro change reader', () => {
  const { records, writerSchemas } = avroFixture();
  const values = records.filter((r) => r.value !== null && r.topic.startsWith('pda.public.'));

  it('is used for every data topic value schema of the fixture', () => {
    expect(values.length).toBeGreaterThan(20);
    for (const record of values) {
      const entry = writerSchemas.get(schemaIdOf(record.value) as number);
      expect(entry && 'changeReader' in entry && entry.changeReader).toBeTruthy();
    }
  });

  it('a truncated record, or one with bytes after its datum, is not valid Avro', () => {
    const record = values[0]!;
    const id = schemaIdOf(record.value) as number;
    const bytes = Buffer.from(record.value as Uint8Array);
    for (const changeOnly of [false, true]) {
      expect(() =>
        readAvro(writerSchemas, id, bytes.subarray(0, bytes.length - 3), 'value', changeOnly),
      ).toThrow(`value is not valid Avro for writer schema ${id}: truncated buffer`);
      expect(() =>
        readAvro(writerSchemas, id, Buffer.concat([bytes, Buffer.of(0)]), 'value', changeOnly),
      ).toThrow(`value is not valid Avro for writer schema ${id}: trailing data`);
    }
  });

  it.each(values.map((r) => [`${r.topic}@${r.offset}`, r] as const))(
    '%s: the same after, source position, op and ts_ms as the whole record',
    (_name, record) => {
      const id = schemaIdOf(record.value) as number;
      const whole = readAvro(writerSchemas, id, record.value as Uint8Array, 'value').value as Record<
        string,
        Record<string, unknown>
      >;
      const change = readAvro(writerSchemas, id, record.value as Uint8Array, 'value', true).value as Record<
        string,
        Record<string, unknown>
      >;
      expect(change).toEqual({
        after: whole.after,
        source: { ts_ms: whole.source?.ts_ms, lsn: whole.source?.lsn },
        op: whole.op,
        ts_ms: whole.ts_ms,
      });
    },
  );
});
