// Avro's decimal (and Debezium's `precise` decimal.handling.mode): the unscaled value as big-endian
// two's-complement bytes, the scale in the schema. Converted through BigInt, never a float.

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** "-12.5" with scale 2 → -1250n; throws when the text is not a decimal or has too many decimals. */
export function unscaledOf(text: string, scale: number): bigint {
  const match = DECIMAL.exec(text);
  if (!match) throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  const [, sign, whole = '0', fraction = ''] = match;
  if (fraction.length > scale) throw new Error(`${text} has more than ${scale} decimals`);
  const digits = BigInt(whole + fraction.padEnd(scale, '0'));
  return sign === '-' ? -digits : digits;
}

/** -1250n, scale 2 → "-12.50". */
export function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
}

/** Minimal big-endian two's-complement bytes of an integer (at least one byte). */
export function twosComplementBytes(value: bigint): Buffer {
  const bytes: number[] = [];
  let v = value;
  for (;;) {
    const byte = Number(v & 0xffn);
    bytes.unshift(byte);
    v >>= 8n;
    // Done when the remaining bits are pure sign extension of the byte just written.
    if ((v === 0n && (byte & 0x80) === 0) || (v === -1n && (byte & 0x80) !== 0)) break;
  }
  return Buffer.from(bytes);
}

export function bigintFromTwosComplement(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  const first = bytes[0] ?? 0;
  return first & 0x80 ? v - (1n << BigInt(bytes.length * 8)) : v;
}

export function decimalToBytes(text: string, scale: number): Buffer {
  return twosComplementBytes(unscaledOf(text, scale));
}

export function bytesToDecimal(bytes: Uint8Array, scale: number): string {
  return decimalText(bigintFromTwosComplement(bytes), scale);
}
