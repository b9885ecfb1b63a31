import { describe, expect, it } from 'vitest';
import { bytesToDecimal, decimalToBytes, twosComplementBytes } from '../src/index.ts';

describe('decimal bytes (Avro decimal, Debezium precise mode)', () => {
  it.each([
    ['0.00', 2, '00'],
    ['1.27', 2, '7f'],
    ['1.28', 2, '0080'],
    ['-0.01', 2, 'ff'],
    ['-1.28', 2, '80'],
    ['-1.29', 2, 'ff7f'],
    ['9999999999.99', 2, '00e8d4a50fff'],
    ['-93.265015', 6, 'fa70e389'], // checked with Python int.to_bytes(signed=True),
  ])('%s (scale %i) ⇄ %s', (text, scale, hex) => {
    expect(decimalToBytes(text, scale).toString('hex')).toBe(hex);
    expect(bytesToDecimal(Buffer.from(hex, 'hex'), scale)).toBe(text);
  });

  it('pads fewer decimals to the scale and refuses more', () => {
    expect(bytesToDecimal(decimalToBytes('12.5', 2), 2)).toBe('12.50');
    expect(() => decimalToBytes('12.505', 2)).toThrow(/more than 2 decimals/);
    expect(() => decimalToBytes('1e3', 2)).toThrow(/not a decimal/);
  });

  it('round-trips integers around byte boundaries', () => {
    for (const n of [
      0n,
      1n,
      -1n,
      127n,
      128n,
      -128n,
      -129n,
      255n,
      256n,
      32767n,
      -32768n,
      2n ** 63n,
      -(2n ** 63n),
    ]) {
      const bytes = twosComplementBytes(n);
      expect(BigInt(bytesToDecimal(bytes, 0)), String(n)).toBe(n);
    }
  });
});
