/**
 * The Avro half of the decoder's edge: a wire-format record (wire-format.ts) is read with the writer
 * schema its header names (writer-schemas.ts, fetched ahead by the resolver) into the same plain
 * objects the JSON path parses (`{before, after, source, op, ...}`, a key record), plus the column
 * types that schema gives. decoder.ts then builds the same `Change` from either.
 */
import type { ColumnType } from './column-type.ts';
import type { RowDecoder } from './compile-row-decoder.ts';
import type { ValueOptions } from './decode-value.ts';
import { fail } from './errors.ts';
import { WIRE_HEADER_BYTES } from './wire-format.ts';
import { WriterSchema, type WriterSchemas } from './writer-schemas.ts';

export interface AvroRead {
  readonly value: unknown;
  readonly schema: WriterSchema;
}

/**
 * `changeOnly`: a value is read with the writer schema's change reader when it has one (only what a
 * `Change` needs; writer-schemas.ts), else whole. Tests and tools read whole records.
 */
export function readAvro(
  schemas: WriterSchemas | undefined,
  id: number,
  bytes: Uint8Array,
  what: string,
  changeOnly = false,
): AvroRead {
  const entry = schemas?.get(id);
  if (!entry) {
    // The resolver fetches every id of a chunk before it is decoded; only a decoder used without
    // one (no INGEST_SCHEMA_REGISTRY_URL) gets here.
    fail(
      `${what} is Avro (writer schema ${id}) but no schema registry is configured (INGEST_SCHEMA_REGISTRY_URL)`,
    );
  }
  if (!(entry instanceof WriterSchema)) fail(`${what}: ${entry.error}`);
  // avsc reads from an offset of the record's own Buffer (the Kafka client gives Buffers): no view per record.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const invalid = (why: string) =>
    fail(`${what} is not valid Avro for writer schema ${id}: ${why.slice(0, 120)}`);
  let decoded: { value: unknown; offset: number };
  try {
    const reader = changeOnly ? entry.changeReader : undefined;
    decoded = reader
      ? reader.type.decode(buf, WIRE_HEADER_BYTES, reader.resolver)
      : entry.type.decode(buf, WIRE_HEADER_BYTES);
  } catch (error) {
    return invalid(String((error as Error).message));
  }
  // As fromBuffer: the datum must end exactly where the record does.
  if (decoded.offset < 0) invalid('truncated buffer');
  if (decoded.offset !== buf.length) invalid('trailing data');
  return { value: decoded.value, schema: entry };
}

/** The writer's row decoder for a table, refusing a schema that no longer fits its .avsc (schema-fit.ts). */
export function avroRowDecoder(
  read: AvroRead,
  topic: string,
  table: string,
  avsc: ReadonlyMap<string, ColumnType> | undefined,
  options: ValueOptions,
): RowDecoder {
  if (avsc) {
    const misfit = read.schema.misfit(avsc);
    if (misfit)
      fail(`writer schema ${read.schema.id} of ${topic} does not fit schemas/${table}.avsc: ${misfit}`);
  }
  return read.schema.rowDecoder(avsc, options);
}
