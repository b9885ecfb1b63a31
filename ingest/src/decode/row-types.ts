/**
 * Which type each column of a row has — the inline Connect schema's, completed by the table's .avsc
 * (`resolveTypes`) — and the decoder compiled for a resolved type map (compile-row-decoder.ts),
 * compiled once and reused: a row object of the envelope (`after`, or the message key) → projection
 * Row. Columns holding Debezium's unavailable-value placeholder (unchanged TOASTed values under
 * default REPLICA IDENTITY) are left out of the row and listed in `unavailable`, so apply keeps the
 * stored value.
 */
import { type ColumnType, PLAIN } from './column-type.ts';
import { compileRowDecoder, type DecodedRow, type RowDecoder } from './compile-row-decoder.ts';
import type { ValueOptions } from './decode-value.ts';

export { type DecodedRow, UNAVAILABLE_PLACEHOLDER } from './compile-row-decoder.ts';

/**
 * The inline Connect type wins; the .avsc fills what JSON alone cannot say: the scale of a
 * schema-less precise decimal, and that a plain string column is a string-mode decimal.
 */
function resolveType(inline: ColumnType | undefined, avsc: ColumnType | undefined): ColumnType {
  if (!inline) return avsc ?? PLAIN;
  if (avsc?.kind === 'decimal') {
    if (inline.kind === 'plain') return { kind: 'decimal', encoding: 'string', scale: avsc.scale };
    if (inline.kind === 'decimal' && inline.encoding === 'precise' && inline.scale === undefined) {
      return { ...inline, scale: avsc.scale };
    }
  }
  return inline;
}

/** Column name → resolved type, for every column either source names (others are PLAIN). */
export function resolveTypes(
  inline: ReadonlyMap<string, ColumnType> | undefined,
  avsc: ReadonlyMap<string, ColumnType> | undefined,
): Map<string, ColumnType> {
  const resolved = new Map<string, ColumnType>();
  for (const column of new Set([...(inline?.keys() ?? []), ...(avsc?.keys() ?? [])])) {
    resolved.set(column, resolveType(inline?.get(column), avsc?.get(column)));
  }
  return resolved;
}

// One compiled decoder per resolved type map (those are cached per schema, so identity is stable)
// and value options (one per decoder instance).
const compiled = new WeakMap<object, { readonly options: ValueOptions; readonly decode: RowDecoder }>();
const untyped = new WeakMap<ValueOptions, RowDecoder>();

/** The compiled row decoder of `types` (compile-row-decoder.ts). */
export function rowDecoderFor(
  types: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
): RowDecoder {
  if (!types) {
    let decode = untyped.get(options);
    if (!decode) {
      decode = compileRowDecoder(undefined, options);
      untyped.set(options, decode);
    }
    return decode;
  }
  let entry = compiled.get(types);
  if (entry?.options !== options) {
    entry = { options, decode: compileRowDecoder(types, options) };
    compiled.set(types, entry);
  }
  return entry.decode;
}

/** `types`: from resolveTypes (cached per schema by SchemaCache); undefined = every column PLAIN. */
export function decodeRow(
  raw: Record<string, unknown>,
  types: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
): DecodedRow {
  return rowDecoderFor(types, options)(raw);
}
