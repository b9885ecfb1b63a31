// avsc logical types for the .avsc files, so a parsed Type validates real row values and
// `type.random()` yields plausible ones: decimals as exact strings within precision and scale,
// uuids, and Debezium ZonedTimestamp strings (ISO 8601 UTC, 0–9 fractional digits).
import { randomInt, randomUUID } from 'node:crypto';
// avsc is CommonJS: plain Node ESM has only its default export, so values come from it.
import avsc, { type Schema, type Type, type types } from 'avsc';
import { bytesToDecimal, decimalText, decimalToBytes, unscaledOf } from './decimal-bytes.ts';

export const ZONED_TIMESTAMP = 'io.debezium.time.ZonedTimestamp';

// avsc's typings declare random() as returning the Type itself; it returns a value.
const asRandom = (value: unknown) => value as types.LogicalType;

export class DecimalType extends avsc.types.LogicalType {
  readonly precision: number;
  readonly scale: number;

  constructor(schema: Schema, opts?: unknown) {
    super(schema, opts);
    const s = schema as { precision?: unknown; scale?: unknown };
    if (typeof s.precision !== 'number' || s.precision < 1) throw new Error('decimal needs a precision');
    this.precision = s.precision;
    this.scale = typeof s.scale === 'number' ? s.scale : 0;
  }

  protected override _fromValue(bytes: Buffer): string {
    return bytesToDecimal(bytes, this.scale);
  }

  protected override _toValue(text: unknown): Buffer | undefined {
    if (typeof text !== 'string') return undefined;
    const unscaled = unscaledOf(text, this.scale);
    const digits = (unscaled < 0n ? -unscaled : unscaled).toString().length;
    if (digits > this.precision) throw new Error(`${text} exceeds precision ${this.precision}`);
    return decimalToBytes(text, this.scale);
  }

  protected override _resolve(type: Type): ((v: unknown) => unknown) | undefined {
    if (type instanceof DecimalType && type.scale === this.scale && type.precision <= this.precision) {
      return (v) => v;
    }
    return undefined;
  }

  override random(): types.LogicalType {
    let digits = '';
    const length = randomInt(1, this.precision + 1);
    for (let i = 0; i < length; i++) digits += String(randomInt(0, 10));
    const unscaled = BigInt(digits) * (randomInt(0, 4) === 0 ? -1n : 1n);
    return asRandom(decimalText(unscaled, this.scale));
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class UuidType extends avsc.types.LogicalType {
  protected override _fromValue(text: string): string {
    return text;
  }

  protected override _toValue(text: unknown): string | undefined {
    return typeof text === 'string' && UUID.test(text) ? text : undefined;
  }

  protected override _resolve(type: Type): ((v: unknown) => unknown) | undefined {
    return type instanceof UuidType || type.typeName === 'string' ? (v) => v : undefined;
  }

  override random(): types.LogicalType {
    return asRandom(randomUUID());
  }
}

const ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

export class ZonedTimestampType extends avsc.types.LogicalType {
  protected override _fromValue(text: string): string {
    return text;
  }

  protected override _toValue(text: unknown): string | undefined {
    return typeof text === 'string' && ZONED.test(text) && !Number.isNaN(Date.parse(text)) ? text : undefined;
  }

  protected override _resolve(type: Type): ((v: unknown) => unknown) | undefined {
    return type instanceof ZonedTimestampType || type.typeName === 'string' ? (v) => v : undefined;
  }

  override random(): types.LogicalType {
    const seconds = randomInt(946_684_800, 4_102_444_800); // 2000 .. 2100
    const fraction =
      randomInt(0, 10) === 0
        ? ''
        : `.${String(randomInt(0, 1e9)).padStart(9, '0').slice(0, randomInt(1, 10))}`;
    return asRandom(`${new Date(seconds * 1000).toISOString().slice(0, 19)}${fraction}Z`);
  }
}

/**
 * Debezium marks zoned timestamps with `connect.name` on a plain string, not with a logicalType,
 * so a type hook swaps those strings for ZonedTimestampType.
 */
export function zonedTimestampHook(schema: Schema, opts: unknown): Type | undefined {
  const s = schema as { type?: unknown; 'connect.name'?: unknown };
  if (typeof s === 'object' && s.type === 'string' && s['connect.name'] === ZONED_TIMESTAMP) {
    return new ZonedTimestampType({ type: 'string', logicalType: 'zoned-timestamp' } as Schema, opts);
  }
  return undefined;
}
