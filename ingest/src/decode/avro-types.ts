/**
 * Writer schemas of the Avro path, compiled with avsc: the schema a record was written with is read
 * from the registry by the id in the record's wire header (wire-format.ts, schema-registry/), once
 * per id, and compiled here once. Debezium's Avro schemas (written by Apicurio's converter from the
 * Connect schemas) name their Connect type in `connect.name` and decimals carry `scale`; both map to
 * the same ColumnType as the JSON path's inline schema (column-type.ts), so one decodeRow serves both.
 */
import avsc, { type Schema, type Type } from 'avsc';
import { type ColumnType, type ConnectSchema, columnTypeFromConnect } from './column-type.ts';

/**
 * Avro `long` that keeps every value exact: a JS number while it is a safe integer (positions,
 * ms/µs timestamps), a BigInt beyond 2^53 (`ts_ns`, nanosecond columns), which the value decoder
 * handles as the JSON path's lossless parse does. avsc's own long throws on such values.
 */
class ExactLongType extends avsc.types.LongType {
  _read(tap: { buf: Buffer; pos: number; readLong(): number }): number | bigint {
    const start = tap.pos;
    const n = tap.readLong();
    if (Number.isSafeInteger(n)) return n;
    tap.pos = start;
    let unsigned = 0n;
    let shift = 0n;
    let byte: number;
    do {
      byte = tap.buf[tap.pos++] ?? 0;
      unsigned |= BigInt(byte & 0x7f) << shift;
      shift += 7n;
    } while (byte & 0x80);
    return (unsigned >> 1n) ^ -(unsigned & 1n); // zig-zag
  }
}

/** A compiled writer schema. Records decode to plain objects (no avsc methods to enumerate). */
export function compileWriterSchema(schema: unknown): Type {
  return avsc.Type.forSchema(schema as Schema, {
    registry: { long: new ExactLongType() as unknown as Type },
    omitRecordMethods: true,
    // ["null", X] unions decode to the bare value or null, like JSON.
    wrapUnions: 'auto',
  });
}

type AvroNode = string | readonly AvroNode[] | { readonly [key: string]: unknown };

const nonNull = (node: AvroNode): AvroNode =>
  Array.isArray(node) ? ((node as readonly AvroNode[]).find((n) => n !== 'null') ?? 'null') : node;

const CONNECT_TYPES: Readonly<Record<string, string>> = {
  int: 'int32',
  long: 'int64',
  string: 'string',
  bytes: 'bytes',
  boolean: 'boolean',
  float: 'float32',
  double: 'float64',
  record: 'struct',
  array: 'array',
  map: 'map',
};

/** An Avro field type as the Connect schema it was written from (what column-type.ts reads). */
export function connectSchemaOf(node: AvroNode): ConnectSchema {
  const n = nonNull(node);
  if (typeof n === 'string') return { type: CONNECT_TYPES[n] ?? n };
  if (Array.isArray(n)) return {};
  const obj = n as Record<string, unknown>;
  if (typeof obj.type === 'object' && obj.type !== null) return connectSchemaOf(obj.type as AvroNode);
  const parameters = (obj['connect.parameters'] as Record<string, unknown> | undefined) ?? {};
  return {
    type: CONNECT_TYPES[String(obj.type)] ?? obj.type,
    name: obj['connect.name'],
    parameters: obj.scale !== undefined ? { ...parameters, scale: obj.scale } : parameters,
    ...(obj.items !== undefined ? { items: connectSchemaOf(obj.items as AvroNode) } : {}),
  };
}

/** Column name → type for an Avro record schema (the envelope's row record, or the key). */
export function columnTypesFromAvroRecord(record: unknown): Map<string, ColumnType> {
  const types = new Map<string, ColumnType>();
  const fields = (record as { fields?: unknown } | undefined)?.fields;
  if (!Array.isArray(fields)) return types;
  for (const field of fields as { name?: unknown; type?: AvroNode }[]) {
    if (typeof field.name === 'string' && field.type !== undefined) {
      types.set(field.name, columnTypeFromConnect(connectSchemaOf(field.type)));
    }
  }
  return types;
}

/**
 * The row record of a Debezium envelope schema (`after`, which is `["null", <record>]` or, when
 * `before` came first, the record's name); undefined for schemas that are not envelopes.
 */
export function envelopeRowRecord(envelope: unknown): unknown {
  const fields = (envelope as { fields?: unknown }).fields;
  if (!Array.isArray(fields)) return undefined;
  for (const name of ['before', 'after']) {
    const field = (fields as { name?: unknown; type?: AvroNode }[]).find((f) => f.name === name);
    const type = field?.type === undefined ? undefined : nonNull(field.type);
    if (typeof type === 'object' && type !== null && !Array.isArray(type)) {
      if ((type as { type?: unknown }).type === 'record') return type;
    }
  }
  return undefined;
}

type Fields = readonly { readonly name?: unknown; readonly type?: AvroNode }[];

/**
 * The reader schema of WriterSchema.changeReader: the envelope with only what decoder.ts reads.
 * Names and namespaces stay the writer's (Avro resolution matches records by name); the row record,
 * defined at its first use (`before`), is written out in `after`. undefined when `schema` is not a
 * Debezium envelope with a row record and a source block.
 */
export function changeReaderSchema(schema: unknown): unknown {
  const envelope = schema as { type?: unknown; fields?: Fields };
  if (envelope?.type !== 'record' || !Array.isArray(envelope.fields)) return undefined;
  const field = (name: string) => envelope.fields?.find((f) => f.name === name);
  const row = envelopeRowRecord(schema);
  const after = field('after');
  const source = nonNull(field('source')?.type ?? 'null') as { type?: unknown; fields?: Fields };
  const op = field('op');
  if (!row || !after || !op || source?.type !== 'record' || !Array.isArray(source.fields)) return undefined;
  const kept = source.fields.filter((f) => f.name === 'lsn' || f.name === 'ts_ms');
  const tsMs = field('ts_ms');
  return {
    ...envelope,
    fields: [
      { ...after, type: ['null', row], default: null },
      { ...field('source'), type: { ...source, fields: kept } },
      op,
      ...(tsMs ? [tsMs] : []),
    ],
  };
}
