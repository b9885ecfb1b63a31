/**
 * Column types from a table's Avro schema (schemas/<table>.avsc), for events that arrive without an
 * inline Connect schema: decimal scale and which string/long columns are timestamps.
 */
import type { ColumnType } from './column-type.ts';
import { PLAIN } from './column-type.ts';

type AvroNode = string | readonly AvroNode[] | { readonly [key: string]: unknown };

function nonNull(node: AvroNode): AvroNode {
  if (Array.isArray(node)) return (node as readonly AvroNode[]).find((n) => n !== 'null') ?? 'null';
  return node;
}

function typeOf(node: AvroNode): ColumnType {
  const n = nonNull(node);
  if (typeof n === 'string' || Array.isArray(n)) return n === 'int' || n === 'long' ? { kind: 'int' } : PLAIN;
  const obj = n as Record<string, unknown>;
  const logical = obj.logicalType;
  const connectName = obj['connect.name'];
  if (logical === 'decimal') {
    return { kind: 'decimal', encoding: 'unknown', scale: typeof obj.scale === 'number' ? obj.scale : 0 };
  }
  if (connectName === 'io.debezium.time.ZonedTimestamp') return { kind: 'zoned-timestamp' };
  if (logical === 'timestamp-micros' || logical === 'local-timestamp-micros') return { kind: 'timestamp' };
  if (logical === 'timestamp-millis' || logical === 'local-timestamp-millis') {
    return { kind: 'epoch-timestamp', unit: 'ms' };
  }
  if (logical === 'date') return { kind: 'date' };
  if (logical === 'uuid') return { kind: 'uuid' };
  if (connectName === 'io.debezium.data.Json') return { kind: 'json' };
  if (obj.type === 'array') return { kind: 'array', items: typeOf(obj.items as AvroNode) };
  if (obj.type === 'int' || obj.type === 'long') return { kind: 'int' };
  if (typeof obj.type === 'object' && obj.type !== null) return typeOf(obj.type as AvroNode);
  return PLAIN;
}

/** Accepts the parsed .avsc JSON or an avsc `Type` (anything with `.schema()`). */
export function columnTypesFromAvsc(avsc: unknown): Map<string, ColumnType> {
  const json =
    typeof avsc === 'object' && avsc !== null && typeof (avsc as { schema?: unknown }).schema === 'function'
      ? (avsc as { schema: () => unknown }).schema()
      : avsc;
  const types = new Map<string, ColumnType>();
  const fields = (json as { fields?: unknown })?.fields;
  if (!Array.isArray(fields)) return types;
  for (const f of fields as { name?: unknown; type?: AvroNode }[]) {
    if (typeof f.name === 'string' && f.type !== undefined) types.set(f.name, typeOf(f.type));
  }
  return types;
}
