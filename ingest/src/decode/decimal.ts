/**
 * Debezium NUMERIC encodings → exact decimal strings ('1234.50'), with BigInt only: a decimal
 * never passes through a JS float (money is exported as a decimal string: docs/public-data-api-v1.md).
 *
 * - precise (decimal.handling.mode=precise, the default): base64 of the big-endian two's-complement
 *   unscaled integer (Java BigInteger.toByteArray); the scale is in the Connect schema parameters
 *   (`scale`) or, without an inline schema, in the table's .avsc. In Avro the same bytes, raw
 *   (`bytes` with logicalType `decimal`), the scale in the writer schema.
 * - variable scale (unconstrained NUMERIC in precise mode): `{ scale, value }` with value as above.
 * - string mode: Debezium's BigDecimal.toPlainString(), e.g. '-12.50'.
 */
import { fail } from './errors.ts';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL_STRING = /^-?\d+(?:\.\d+)?$/;

/** Unscaled integer from base64 two's-complement big-endian bytes. */
export function unscaledFromBase64(text: string): bigint {
  if (text.length === 0 || !BASE64.test(text)) fail(`decimal bytes are not base64: '${text.slice(0, 64)}'`);
  return unscaledFromBytes(Buffer.from(text, 'base64'));
}

/** Unscaled integer from two's-complement big-endian bytes (Avro's `decimal` logical type). */
export function unscaledFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length === 0) fail('decimal has no bytes');
  let value = BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`);
  if ((bytes[0] ?? 0) & 0x80) value -= 1n << BigInt(bytes.length * 8); // negative in two's complement
  return value;
}

/**
 * Avro's decimal bytes → decimal string. Up to 6 bytes (|unscaled| < 2^47: every NUMERIC(14, s) and
 * smaller, i.e. all money columns here) the integer is exact as a JS number, much cheaper than
 * BigInt (decimals through BigInt were among the decoder's costs in
 * bench/results/ingest-formats-2026-11-25.md); larger values and odd scales take the BigInt path. Same text as formatScaled.
 */
export function decimalFromBytes(bytes: Uint8Array, scale: number): string {
  const n = bytes.length;
  if (n === 0 || n > 6 || !(scale >= 0 && scale <= 20 && Number.isInteger(scale))) {
    return formatScaled(unscaledFromBytes(bytes), scale);
  }
  let unscaled = 0;
  for (let i = 0; i < n; i++) unscaled = unscaled * 256 + (bytes[i] as number);
  if ((bytes[0] as number) & 0x80) unscaled -= 2 ** (8 * n); // two's complement
  const negative = unscaled < 0;
  let digits = String(negative ? -unscaled : unscaled);
  if (scale === 0) return negative ? `-${digits}` : digits;
  if (digits.length <= scale) digits = digits.padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** unscaled × 10^-scale as a plain decimal string (scale may be negative: trailing zeros). */
export function formatScaled(unscaled: bigint, scale: number): string {
  if (!Number.isSafeInteger(scale) || Math.abs(scale) > 1000) fail(`decimal scale out of range: ${scale}`);
  const negative = unscaled < 0n;
  let digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) {
    const text = unscaled === 0n ? '0' : digits + '0'.repeat(-scale);
    return negative ? `-${text}` : text;
  }
  digits = digits.padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** base64 text (JSON) or the bytes themselves (Avro). */
export function decimalFromPrecise(value: unknown, scale: number | undefined): string {
  if (typeof value !== 'string' && !(value instanceof Uint8Array))
    fail(`precise decimal must be base64 text or bytes, got ${typeof value}`);
  if (scale === undefined)
    fail('precise decimal without a known scale (no inline schema and no .avsc scale)');
  return typeof value === 'string'
    ? formatScaled(unscaledFromBase64(value), scale)
    : decimalFromBytes(value, scale);
}

export function decimalFromVariableScale(value: unknown): string {
  if (typeof value !== 'object' || value === null) fail('variable-scale decimal must be {scale, value}');
  const { scale, value: bytes } = value as { scale?: unknown; value?: unknown };
  if (typeof scale !== 'number' || !Number.isSafeInteger(scale))
    fail('variable-scale decimal has no integer scale');
  if (bytes instanceof Uint8Array) return formatScaled(unscaledFromBytes(bytes), scale);
  if (typeof bytes !== 'string') fail('variable-scale decimal has no base64 value');
  return formatScaled(unscaledFromBase64(bytes), scale);
}

/** string mode: keep Debezium's exact text; NaN/±Infinity cannot be money, so they are errors. */
export function decimalFromString(text: unknown): string {
  if (typeof text !== 'string' || !DECIMAL_STRING.test(text)) {
    fail(`not a finite decimal string: '${String(text).slice(0, 64)}'`);
  }
  return text;
}
