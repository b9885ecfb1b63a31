/**
 * A row object of the envelope (`after`, or the message key) → projection Row. Columns holding
 * Debezium's unavailable-value placeholder (unchanged TOASTed values under default REPLICA
 * IDENTITY) are left out of the row and listed in `unavailable`, so apply keeps the stored value.
 */
import type { ColumnValue, Row } from '@pda/projections';
import { type ColumnType, PLAIN } from './column-type.ts';
import { decodeValue, type ValueOptions } from './decode-value.ts';
import { DecodeError } from './errors.ts';

/** Debezium's default `unavailable.value.placeholder`. */
export const UNAVAILABLE_PLACEHOLDER = '__debezium_unavailable_value';
// Binary columns carry the placeholder's bytes, so as base64 in JSON.
const UNAVAILABLE_BYTES = Buffer.from(UNAVAILABLE_PLACEHOLDER, 'utf8');
const UNAVAILABLE_BASE64 = UNAVAILABLE_BYTES.toString('base64');

function isUnavailable(value: unknown): boolean {
  if (value === UNAVAILABLE_PLACEHOLDER || value === UNAVAILABLE_BASE64) return true;
  // Avro: a binary column (a decimal, too) carries the placeholder's raw bytes.
  if (value instanceof Uint8Array) return UNAVAILABLE_BYTES.equals(value);
  return Array.isArray(value) && value.length === 1 && value[0] === UNAVAILABLE_PLACEHOLDER;
}

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

export interface DecodedRow {
  readonly row: Row;
  readonly unavailable: readonly string[];
}

const NONE: readonly string[] = [];

/** `types`: from resolveTypes (cached per schema by SchemaCache); undefined = every column PLAIN. */
export function decodeRow(
  raw: Record<string, unknown>,
  types: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
): DecodedRow {
  const row: Record<string, ColumnValue> = {};
  let unavailable: string[] | undefined;
  for (const column in raw) {
    const value = raw[column];
    if (isUnavailable(value)) {
      unavailable ??= [];
      unavailable.push(column);
      continue;
    }
    try {
      row[column] = decodeValue(value, types?.get(column) ?? PLAIN, options);
    } catch (error) {
      if (error instanceof DecodeError) throw new DecodeError(`column '${column}': ${error.message}`);
      throw error;
    }
  }
  return { row, unavailable: unavailable ?? NONE };
}
