import { describe, expect, it } from 'vitest';
import { decimalFromPrecise, decimalFromString, decimalFromVariableScale } from '../src/decode/decimal.ts';
import { DecodeError } from '../src/decode/errors.ts';
import { dateFromEpochDays, isoFromEpoch, isoFromZonedString } from '../src/decode/time.ts';
import { preciseBase64 } from '../src/testing/index.ts';

const b64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

describe('ZonedTimestamp strings → ISO UTC with 6 digits', () => {
  it.each([
    ['2024-01-31T12:00:00Z', '2024-01-31T12:00:00.000000Z'],
    ['2024-01-31T12:00Z', '2024-01-31T12:00:00.000000Z'],
    ['2024-01-31T12:00:00.1Z', '2024-01-31T12:00:00.100000Z'],
    ['2024-01-31T12:00:00.12345Z', '2024-01-31T12:00:00.123450Z'],
    ['2024-01-31T12:00:00.123456Z', '2024-01-31T12:00:00.123456Z'],
    ['2024-01-31T12:00:00.1234567Z', '2024-01-31T12:00:00.123456Z'], // truncated, not rounded
    ['2024-01-31T12:00:00.999999999Z', '2024-01-31T12:00:00.999999Z'],
    ['2024-01-01T01:30:00.5+02:00', '2023-12-31T23:30:00.500000Z'],
    ['2023-12-31T23:30:00-05:30', '2024-01-01T05:00:00.000000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000000Z'], // Date.UTC would say 1950
    ['infinity', '9999-12-31T23:59:59.999999Z'],
    ['-infinity', '0001-01-01T00:00:00.000000Z'],
  ])('%s → %s', (input, expected) => {
    expect(isoFromZonedString(input)).toBe(expected);
  });

  it.each([
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2024-01-31T24:00:00Z',
    '2024-01-31 12:00:00Z',
    '2024-01-31T12:00:00',
    '2024-01-31T12:00:00.1234567890Z',
    '',
    '10000-01-01T00:00:00Z',
  ])('rejects %j', (input) => {
    expect(() => isoFromZonedString(input)).toThrow(DecodeError);
  });
});

describe('epoch integers → ISO UTC', () => {
  it.each([
    [1706702400123456n, 'us', '2024-01-31T12:00:00.123456Z'],
    [-1n, 'us', '1969-12-31T23:59:59.999999Z'],
    [0n, 'us', '1970-01-01T00:00:00.000000Z'],
    [1706702400123n, 'ms', '2024-01-31T12:00:00.123000Z'],
    [-1n, 'ms', '1969-12-31T23:59:59.999000Z'],
    [1706702400123456789n, 'ns', '2024-01-31T12:00:00.123456Z'],
    [-1n, 'ns', '1969-12-31T23:59:59.999999Z'],
  ] as const)('%s %s → %s', (value, unit, expected) => {
    expect(isoFromEpoch(value, unit)).toBe(expected);
  });

  it.each([
    [19753, '2024-01-31'],
    [0, '1970-01-01'],
    [-1, '1969-12-31'],
    [-719162, '0001-01-01'],
  ])('date %i → %s', (days, expected) => {
    expect(dateFromEpochDays(days)).toBe(expected);
  });
});

describe('decimals without floats', () => {
  it.each([
    [b64('04e2'), 2, '12.50'],
    [b64('ff'), 2, '-0.01'],
    [b64('00'), 2, '0.00'],
    [b64('80'), 0, '-128'],
    [b64('0080'), 0, '128'],
    [b64('00e8d4a50fff'), 2, '9999999999.99'], // numeric(12,2) max
    [b64('ff172b5af001'), 2, '-9999999999.99'],
    [b64('0001e240'), 6, '0.123456'],
    [b64('7b'), -2, '12300'],
  ])('precise %s scale %i → %s', (text, scale, expected) => {
    expect(decimalFromPrecise(text, scale)).toBe(expected);
  });

  it('precise round-trips values beyond 2^53 exactly', () => {
    const big = '123456789012345678901234567890.123456789';
    expect(decimalFromPrecise(preciseBase64(big, 9), 9)).toBe(big);
    expect(decimalFromPrecise(preciseBase64(`-${big}`, 9), 9)).toBe(`-${big}`);
  });

  it('variable scale {scale, value}', () => {
    expect(decimalFromVariableScale({ scale: 3, value: b64('3039') })).toBe('12.345');
    expect(decimalFromVariableScale({ scale: 0, value: b64('ff') })).toBe('-1');
  });

  it('string mode keeps the text and rejects non-finite values', () => {
    expect(decimalFromString('-12.50')).toBe('-12.50');
    for (const bad of ['NaN', 'Infinity', '1e5', '12.', '', 12.5]) {
      expect(() => decimalFromString(bad)).toThrow(DecodeError);
    }
  });

  it.each([['not base64!'], [''], [12]])('precise rejects %j', (bad) => {
    expect(() => decimalFromPrecise(bad, 2)).toThrow(DecodeError);
  });

  it('precise without a scale is an error, not a guess', () => {
    expect(() => decimalFromPrecise(b64('04e2'), undefined)).toThrow(/scale/);
  });
});
