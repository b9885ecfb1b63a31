/**
 * A row decoder compiled once per column-type map (one per writer schema or inline schema, with the
 * table's .avsc: row-types.ts `resolveTypes`, cached by SchemaCache and WriterSchema), so that the
 * per-event work is one small function per column: no Map lookup and no switch on the column kind
 * per value, and the common values (a canonical UUID, a UTC timestamp already in the projection's
 * form, an integer, a small decimal) returned without a regex or BigInt. Anything else goes to
 * decodeValue, which holds every rule; the result is the same either way (unit tables over the
 * captured JSON and Avro events, tests/compile-row-decoder.test.ts).
 */
import type { ColumnValue, Row } from '@pda/projections/model';
import { type ColumnType, PLAIN } from './column-type.ts';
import { decimalFromBytes } from './decimal.ts';
import { decodeValue, type ValueOptions } from './decode-value.ts';
import { DecodeError } from './errors.ts';
import { isCanonicalUtc, isoFromZonedString } from './time.ts';

/** Debezium's default `unavailable.value.placeholder`. */
export const UNAVAILABLE_PLACEHOLDER = '__debezium_unavailable_value';
// Binary columns carry the placeholder's bytes, so as base64 in JSON.
const UNAVAILABLE_BYTES = Buffer.from(UNAVAILABLE_PLACEHOLDER, 'utf8');
const UNAVAILABLE_BASE64 = UNAVAILABLE_BYTES.toString('base64');

export function isUnavailable(value: unknown): boolean {
  if (value === UNAVAILABLE_PLACEHOLDER || value === UNAVAILABLE_BASE64) return true;
  // Avro: a binary column (a decimal, too) carries the placeholder's raw bytes.
  if (value instanceof Uint8Array)
    return value.length === UNAVAILABLE_BYTES.length && UNAVAILABLE_BYTES.equals(value);
  return Array.isArray(value) && value.length === 1 && value[0] === UNAVAILABLE_PLACEHOLDER;
}

/** What a column decoder returns for the placeholder: the column is left out of the row. */
const UNAVAILABLE: unique symbol = Symbol('unavailable');
type ColumnDecoder = (value: unknown) => ColumnValue | typeof UNAVAILABLE;

export interface DecodedRow {
  readonly row: Row;
  readonly unavailable: readonly string[];
}

export type RowDecoder = (raw: Record<string, unknown>) => DecodedRow;

/** A lowercase 8-4-4-4-12 hex UUID, what Debezium writes for `uuid` columns. */
function isCanonicalUuid(text: string): boolean {
  if (text.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) {
      return false;
    }
  }
  return true;
}

function columnDecoder(type: ColumnType, options: ValueOptions): ColumnDecoder {
  const generic: ColumnDecoder = (value) =>
    isUnavailable(value) ? UNAVAILABLE : decodeValue(value, type, options);
  switch (type.kind) {
    case 'plain':
      return (value) =>
        typeof value === 'string' && value !== UNAVAILABLE_PLACEHOLDER && value !== UNAVAILABLE_BASE64
          ? value
          : generic(value);
    case 'uuid':
      return (value) => (typeof value === 'string' && isCanonicalUuid(value) ? value : generic(value));
    case 'zoned-timestamp':
      return (value) =>
        typeof value === 'string' && isCanonicalUtc(value)
          ? value
          : typeof value === 'string' && value !== UNAVAILABLE_PLACEHOLDER
            ? isoFromZonedString(value)
            : generic(value);
    case 'int':
      return (value) => (typeof value === 'number' && Number.isSafeInteger(value) ? value : generic(value));
    case 'decimal': {
      const { scale } = type;
      if (type.encoding !== 'precise' || scale === undefined) return generic;
      // Avro's raw bytes (JSON's base64 text takes the generic path); the placeholder is 28 bytes.
      return (value) =>
        value instanceof Uint8Array && value.length > 0 && value.length <= 6
          ? decimalFromBytes(value, scale)
          : generic(value);
    }
    default:
      return generic;
  }
}

const NONE: readonly string[] = [];

/**
 * Compiles the decoder of rows whose columns have `types` (undefined: every column PLAIN).
 * `fixedColumns`: the exact columns, in order, of every row given (an Avro record: its writer
 * schema's fields), which allows the fixed-shape fast path below.
 */
export function compileRowDecoder(
  types: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
  fixedColumns?: readonly string[],
): RowDecoder {
  const general = compileLoopDecoder(types, options);
  if (!fixedColumns || fixedColumns.length === 0 || fixedColumns.length > 200) return general;
  return compileFixedShape(
    fixedColumns.map((name) => columnDecoder(types?.get(name) ?? PLAIN, options)),
    fixedColumns,
    general,
  );
}

/**
 * Rows whose columns are always the same (Avro records) are built as one object literal by a
 * function generated for those columns: V8 then creates every row with one fixed shape instead of
 * adding ~20 properties one by one, the slowest part of the loop below. Any row holding the
 * placeholder, or a value that fails, is decoded again by the loop, which leaves the column out or
 * names it in the error. Column names come from a compiled Avro schema (`[A-Za-z_][A-Za-z0-9_]*`)
 * and are written as JSON string literals.
 */
function compileFixedShape(
  decoders: readonly ColumnDecoder[],
  columns: readonly string[],
  general: RowDecoder,
): RowDecoder {
  const key = (i: number) => JSON.stringify(columns[i]);
  const reads = columns.map((_, i) => `const c${i} = decodeOrNull(d[${i}], raw[${key(i)}]);`).join('\n');
  const anyUnavailable = columns.map((_, i) => `c${i} === U`).join(' || ');
  const literal = columns.map((_, i) => `${key(i)}: c${i}`).join(', ');
  const body = `return function fixedShapeRow(raw) {
  try {
    ${reads}
    if (${anyUnavailable}) return general(raw);
    return { row: { ${literal} }, unavailable: NONE };
  } catch {
    return general(raw);
  }
};`;
  return new Function('d', 'U', 'NONE', 'general', 'decodeOrNull', body)(
    decoders,
    UNAVAILABLE,
    NONE,
    general,
    decodeOrNull,
  ) as RowDecoder;
}

function decodeOrNull(decode: ColumnDecoder, value: unknown): ColumnValue | typeof UNAVAILABLE {
  return value === null || value === undefined ? null : decode(value);
}

function compileLoopDecoder(
  types: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
): RowDecoder {
  const names: string[] = [];
  const decoders: ColumnDecoder[] = [];
  const byName = new Map<string, ColumnDecoder>();
  for (const [name, type] of types ?? []) {
    const decoder = columnDecoder(type, options);
    names.push(name);
    decoders.push(decoder);
    byName.set(name, decoder);
  }
  const plain = columnDecoder(PLAIN, options);
  return (raw) => {
    const row: Record<string, ColumnValue> = {};
    let unavailable: string[] | undefined;
    let i = 0;
    for (const column in raw) {
      // Avro records (and Debezium's JSON) list the columns in the schema's order: the decoder at
      // the same position is the column's; anything else is looked up by name.
      const decode = names[i] === column ? (decoders[i] as ColumnDecoder) : (byName.get(column) ?? plain);
      i++;
      const value = raw[column];
      if (value === null || value === undefined) {
        row[column] = null;
        continue;
      }
      let decoded: ColumnValue | typeof UNAVAILABLE;
      try {
        decoded = decode(value);
      } catch (error) {
        if (error instanceof DecodeError) throw new DecodeError(`column '${column}': ${error.message}`);
        throw error;
      }
      if (decoded === UNAVAILABLE) {
        unavailable ??= [];
        unavailable.push(column);
      } else {
        row[column] = decoded;
      }
    }
    return { row, unavailable: unavailable ?? NONE };
  };
}
