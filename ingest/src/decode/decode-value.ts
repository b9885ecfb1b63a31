/**
 * One column value: Debezium JSON form + column type → projection value (see change.ts ColumnValue).
 */
import type { ColumnValue } from '@pda/projections/model';
import type { ColumnType } from './column-type.ts';
import { decimalFromPrecise, decimalFromString, decimalFromVariableScale } from './decimal.ts';
import { fail } from './errors.ts';
import { UnsafeIntegerError } from './exact-json.ts';
import { dateFromEpochDays, dateFromIsoString, isoFromEpoch, isoFromZonedString } from './time.ts';

export interface ValueOptions {
  /** How bare (schema-less) precise/string decimals are encoded: the connector's decimal.handling.mode. */
  readonly bareDecimalMode: 'precise' | 'string';
}

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** An integer as BigInt; a JS number beyond 2^53 means JSON.parse rounded it: re-parse exactly. */
function exactInteger(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value !== 'number' || !Number.isInteger(value))
    fail(`${what} is not an integer: ${String(value)}`);
  if (!Number.isSafeInteger(value)) throw new UnsafeIntegerError(what);
  return BigInt(value);
}

export function decodeValue(value: unknown, type: ColumnType, options: ValueOptions): ColumnValue {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'plain':
      if (typeof value === 'string' || typeof value === 'boolean') return value;
      if (typeof value === 'number') {
        if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw new UnsafeIntegerError('number');
        return value;
      }
      if (typeof value === 'bigint') fail(`integer ${value} exceeds 2^53 and cannot be stored exactly`);
      // Avro bytes: the JSON path's form of a binary value (JsonConverter writes base64).
      if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
      return fail(`unexpected ${Array.isArray(value) ? 'array' : typeof value} value`);
    case 'int': {
      const n = exactInteger(value, 'integer');
      if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
        fail(`integer ${n} exceeds 2^53 and cannot be stored exactly`);
      }
      return Number(n);
    }
    case 'uuid':
      if (typeof value !== 'string' || !UUID.test(value))
        fail(`malformed uuid '${String(value).slice(0, 64)}'`);
      return value.toLowerCase();
    case 'json':
      if (typeof value !== 'string') fail('io.debezium.data.Json value is not a string');
      return value;
    case 'decimal':
      return decodeDecimal(value, type, options);
    case 'zoned-timestamp':
      if (typeof value !== 'string') fail('zoned timestamp is not a string');
      return isoFromZonedString(value);
    case 'epoch-timestamp':
      return isoFromEpoch(exactInteger(value, 'timestamp'), type.unit);
    case 'timestamp':
      return typeof value === 'string'
        ? isoFromZonedString(value)
        : isoFromEpoch(exactInteger(value, 'timestamp'), 'us');
    case 'date':
      if (typeof value === 'string') return dateFromIsoString(value);
      return dateFromEpochDays(Number(exactInteger(value, 'date')));
    case 'iso-date':
      if (typeof value !== 'string') fail('iso date is not a string');
      return dateFromIsoString(value);
    case 'array': {
      if (!Array.isArray(value)) fail('array column value is not a JSON array');
      return value.map((item) => {
        const decoded = decodeValue(item, type.items, options);
        if (typeof decoded !== 'string')
          fail('array items must decode to strings (text[] / uuid[] / numeric[])');
        return decoded;
      });
    }
  }
}

function decodeDecimal(
  value: unknown,
  type: Extract<ColumnType, { kind: 'decimal' }>,
  options: ValueOptions,
): string {
  if (typeof value === 'object' && !(value instanceof Uint8Array)) return decimalFromVariableScale(value);
  switch (type.encoding) {
    case 'precise':
      return decimalFromPrecise(value, type.scale);
    case 'string':
      return decimalFromString(value);
    case 'variable':
      return decimalFromVariableScale(value);
    case 'unknown':
      return options.bareDecimalMode === 'string'
        ? decimalFromString(value)
        : decimalFromPrecise(value, type.scale);
  }
}
