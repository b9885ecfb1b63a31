/**
 * What the decoder needs to know about a column to turn Debezium's JSON value into a projection
 * value. Derived per message from the inline Connect schema (JsonConverter schemas.enable=true) or,
 * for bare payloads, once per table from its .avsc (avsc-column-types.ts).
 */
import type { EpochUnit } from './time.ts';

export type DecimalEncoding = 'precise' | 'string' | 'variable' | 'unknown';

export type ColumnType =
  | { readonly kind: 'plain' } // string/number/boolean passed through
  | { readonly kind: 'int' } // int8..int64: must be a safe integer
  | { readonly kind: 'uuid' }
  | { readonly kind: 'json' } // io.debezium.data.Json: the JSON text is kept as a string
  | { readonly kind: 'decimal'; readonly encoding: DecimalEncoding; readonly scale: number | undefined }
  | { readonly kind: 'zoned-timestamp' } // ISO string with offset
  | { readonly kind: 'epoch-timestamp'; readonly unit: EpochUnit }
  | { readonly kind: 'timestamp' } // from .avsc: ISO string or µs integer, decided by the value
  | { readonly kind: 'date' } // days since epoch
  | { readonly kind: 'iso-date' }
  | { readonly kind: 'array'; readonly items: ColumnType };

export const PLAIN: ColumnType = { kind: 'plain' };

/** A Kafka Connect JSON schema node as JsonConverter writes it. */
export interface ConnectSchema {
  readonly type?: unknown;
  readonly name?: unknown;
  readonly field?: unknown;
  readonly optional?: unknown;
  readonly parameters?: Readonly<Record<string, unknown>>;
  readonly fields?: readonly ConnectSchema[];
  readonly items?: ConnectSchema;
}

export function columnTypeFromConnect(schema: ConnectSchema): ColumnType {
  switch (schema.name) {
    case 'org.apache.kafka.connect.data.Decimal': {
      const scale = Number(schema.parameters?.scale);
      return { kind: 'decimal', encoding: 'precise', scale: Number.isSafeInteger(scale) ? scale : undefined };
    }
    case 'io.debezium.data.VariableScaleDecimal':
      return { kind: 'decimal', encoding: 'variable', scale: undefined };
    case 'io.debezium.time.ZonedTimestamp':
    case 'io.debezium.time.IsoTimestamp':
      return { kind: 'zoned-timestamp' };
    case 'io.debezium.time.Timestamp':
    case 'org.apache.kafka.connect.data.Timestamp':
      return { kind: 'epoch-timestamp', unit: 'ms' };
    case 'io.debezium.time.MicroTimestamp':
      return { kind: 'epoch-timestamp', unit: 'us' };
    case 'io.debezium.time.NanoTimestamp':
      return { kind: 'epoch-timestamp', unit: 'ns' };
    case 'io.debezium.time.Date':
    case 'org.apache.kafka.connect.data.Date':
      return { kind: 'date' };
    case 'io.debezium.time.IsoDate':
      return { kind: 'iso-date' };
    case 'io.debezium.data.Json':
      return { kind: 'json' };
    case 'io.debezium.data.Uuid':
      return { kind: 'uuid' };
  }
  switch (schema.type) {
    case 'int8':
    case 'int16':
    case 'int32':
    case 'int64':
      return { kind: 'int' };
    case 'array':
      return { kind: 'array', items: schema.items ? columnTypeFromConnect(schema.items) : PLAIN };
    default:
      return PLAIN;
  }
}

/** Column name → type for a Connect `struct` schema (the envelope's `after`/`before`, or the key). */
export function columnTypesFromConnectStruct(struct: ConnectSchema | undefined): Map<string, ColumnType> {
  const types = new Map<string, ColumnType>();
  for (const field of struct?.fields ?? []) {
    if (typeof field.field === 'string') types.set(field.field, columnTypeFromConnect(field));
  }
  return types;
}
