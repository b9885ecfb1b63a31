/**
 * Kafka record → DecodeResult: the one edge where Debezium's JSON or Avro becomes the typed `Change`
 * ("decode at the edge", docs/architecture.md#code-conventions). Never throws: anything malformed
 * becomes a dead letter with a reason, so one bad message cannot stop its partition.
 */
import type { Change, MessageOrigin, Row, SourcePosition, SourceTable } from '@pda/projections/model';
import type { ColumnType } from './column-type.ts';
import type { RowDecoder } from './compile-row-decoder.ts';
import { avroRowDecoder, readAvro } from './decode-avro.ts';
import type { ValueOptions } from './decode-value.ts';
import { asObject, type Envelope, readEnvelope } from './envelope.ts';
import { DecodeError, fail } from './errors.ts';
import { parseExact, parseFast, UnsafeIntegerError } from './exact-json.ts';
import { keyText, PartitionPositions, type PartitionSeen } from './partition-positions.ts';
import { decodeRow, rowDecoderFor } from './row-types.ts';
import { SchemaCache } from './schema-cache.ts';
import { classifyTopic } from './topic.ts';
import type { DecodeResult, RawRecord } from './types.ts';
import { schemaIdOf } from './wire-format.ts';
import type { WriterSchemas } from './writer-schemas.ts';

export interface DecoderOptions extends ValueOptions {
  readonly topicPrefix: string;
  /** Column types of a table from its .avsc (for events without an inline schema). */
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  /**
   * Writer schemas of Avro records by registry id, fetched before their chunk is decoded
   * (schema-registry/resolver.ts). Without it only JSON records decode.
   */
  readonly writerSchemas?: WriterSchemas;
}

export type Decoder = (record: RawRecord) => DecodeResult;

const ROW_OPS = new Set(['c', 'u', 'r', 'd']);

function parse(cache: SchemaCache, slot: string, raw: Uint8Array | string, exact: boolean, what: string) {
  try {
    return cache.parse(slot, raw, what, exact ? parseExact : parseFast);
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    return fail(`${what} is not valid JSON: ${(error as Error).message.slice(0, 120)}`);
  }
}

function position(source: Record<string, unknown>, op: string, tsMs: number | undefined): SourcePosition {
  const lsn = typeof source.lsn === 'bigint' ? fail('source.lsn exceeds 2^53') : source.lsn;
  const ts = typeof source.ts_ms === 'number' ? source.ts_ms : tsMs;
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) fail('source.ts_ms missing or not an integer');
  if (lsn === undefined || lsn === null) {
    // Incremental-snapshot reads carry no LSN: position 0 lets them fill in missing rows but never
    // overwrite (or resurrect) anything a streamed change wrote.
    if (op === 'r') return { lsn: 0, tsMs: ts };
    fail('source.lsn missing');
  }
  if (typeof lsn !== 'number' || !Number.isSafeInteger(lsn) || lsn < 0)
    fail('source.lsn is not a safe integer');
  return { lsn, tsMs: ts };
}

/** A data topic's table and its schema-cache slots, worked out once per topic name. */
interface DataTopic {
  readonly table: SourceTable;
  readonly keySlot: string;
  readonly valueSlot: string;
}

/**
 * Parses fast first and again exactly only when the fast parse met an integer beyond 2^53 where it
 * matters (exact-json.ts): the exact parser is slower and such values are rare.
 */
function withExactRetry<T>(decode: (exact: boolean) => T): T {
  try {
    return decode(false);
  } catch (error) {
    if (!(error instanceof UnsafeIntegerError)) throw error;
    return decode(true);
  }
}

function decodeKey(
  cache: SchemaCache,
  topic: DataTopic,
  keyText: Uint8Array | string,
  exact: boolean,
  options: DecoderOptions,
): Row {
  let keyRow: Row;
  const id = schemaIdOf(keyText);
  if (id !== undefined) {
    const read = readAvro(options.writerSchemas, id, keyText as Uint8Array, 'key');
    keyRow = read.schema.rowDecoder(options.avscTypes(topic.table), options)(asObject(read.value, 'key')).row;
  } else {
    const key = parse(cache, topic.keySlot, keyText, exact, 'key');
    keyRow = decodeRow(
      asObject(key.payload, 'key'),
      cache.resolvedTypes(key.schema, options.avscTypes(topic.table)),
      options,
    ).row;
  }
  if (Object.keys(keyRow).length === 0) fail('message key has no columns');
  return keyRow;
}

/**
 * A tombstone: ignored after its `d` event, a delete when the log cleaner removed the `d` and this
 * decoder knows the partition's position (partition-positions.ts).
 */
function decodeTombstone(
  cache: SchemaCache,
  origin: MessageOrigin,
  topic: DataTopic,
  keyBytes: Uint8Array | string | null,
  seen: PartitionSeen,
  options: DecoderOptions,
): DecodeResult {
  if (keyBytes === null || seen.maxLsn < 0 || seen.lastDeleteKey === keyText(keyBytes)) {
    return { type: 'ignored', reason: 'tombstone' };
  }
  const key = withExactRetry((exact) => decodeKey(cache, topic, keyBytes, exact, options));
  const position = { lsn: seen.maxLsn + 1, tsMs: seen.tsMs };
  return { type: 'change', change: { kind: 'delete', table: topic.table, key, position, origin } };
}

function decodeChange(
  cache: SchemaCache,
  origin: MessageOrigin,
  topic: DataTopic,
  keyText: Uint8Array | string | null,
  valueText: Uint8Array | string,
  exact: boolean,
  options: DecoderOptions,
): DecodeResult {
  const { table } = topic;
  const avsc = options.avscTypes(table);
  const id = schemaIdOf(valueText);
  let envelope: Envelope;
  let rowDecoder: () => RowDecoder;
  if (id !== undefined) {
    const read = readAvro(options.writerSchemas, id, valueText as Uint8Array, 'value', true);
    envelope = readEnvelope(read.value, undefined);
    rowDecoder = () => avroRowDecoder(read, origin.topic, table, avsc, options);
  } else {
    const value = parse(cache, topic.valueSlot, valueText, exact, 'value');
    envelope = readEnvelope(value.payload, value.schema);
    // Without an inline schema, JSON alone cannot tell a precise decimal (base64) or a timestamp
    // from text: refuse rather than store base64 as an amount.
    if (!value.schema && !avsc) fail(`no inline schema and no .avsc column types for '${table}'`);
    rowDecoder = () => rowDecoderFor(cache.resolvedTypes(envelope.rowSchema, avsc), options);
  }
  const pos = position(envelope.source, envelope.op, envelope.tsMs);
  if (envelope.op === 'm') return { type: 'ignored', reason: 'message' };
  if (envelope.op === 't')
    return { type: 'change', change: { kind: 'truncate', table, position: pos, origin } };
  if (!ROW_OPS.has(envelope.op)) fail(`unknown op '${envelope.op.slice(0, 16)}'`);

  if (keyText === null) fail(`op '${envelope.op}' without a message key`);
  const keyRow = decodeKey(cache, topic, keyText, exact, options);

  if (envelope.op === 'd')
    return { type: 'change', change: { kind: 'delete', table, key: keyRow, position: pos, origin } };
  if (!envelope.after) fail(`op '${envelope.op}' without 'after'`);
  const { row, unavailable } = rowDecoder()(envelope.after);
  const op = envelope.op as 'c' | 'u' | 'r';
  const change: Change = { kind: 'upsert', op, table, key: keyRow, row, unavailable, position: pos, origin };
  return { type: 'change', change };
}

type Routed = DataTopic | { readonly ignored: 'heartbeat' | 'transaction' | 'uncaptured-table' };

export function createDecoder(options: DecoderOptions): Decoder {
  const cache = new SchemaCache();
  // A consumer sees a handful of topic names; classifying each record's name again would build
  // the same strings per record.
  const topics = new Map<string, Routed>();
  const route = (name: string): Routed => {
    let routed = topics.get(name);
    if (!routed) {
      const kind = classifyTopic(name, options.topicPrefix);
      routed =
        kind.kind === 'table'
          ? { table: kind.table, keySlot: `${name}\u0000key`, valueSlot: `${name}\u0000value` }
          : { ignored: kind.kind === 'uncaptured' ? 'uncaptured-table' : kind.kind };
      if (topics.size < 10_000) topics.set(name, routed);
    }
    return routed;
  };
  const partitions = new PartitionPositions();
  return (record) => {
    let seen: PartitionSeen | undefined;
    let result: DecodeResult;
    try {
      const topic = route(record.topic);
      if ('ignored' in topic) return { type: 'ignored', reason: topic.ignored };
      // Dead letters and refusals name the message a change came from.
      const origin = { topic: record.topic, partition: record.partition, offset: record.offset };
      seen = partitions.before(record);
      if (record.value === null) {
        result = decodeTombstone(cache, origin, topic, record.key, seen, options);
      } else {
        if (record.value.length === 0) fail('empty value (neither an event nor a tombstone)');
        const value = record.value;
        // Avro longs beyond 2^53 already decode as BigInt: only JSON needs the exact re-parse.
        result =
          schemaIdOf(value) !== undefined
            ? decodeChange(cache, origin, topic, record.key, value, false, options)
            : withExactRetry((exact) =>
                decodeChange(cache, origin, topic, record.key, value, exact, options),
              );
      }
    } catch (error) {
      result =
        error instanceof DecodeError
          ? { type: 'dead-letter', reason: error.message }
          : { type: 'dead-letter', reason: `unexpected decoder error: ${String(error).slice(0, 200)}` };
    }
    if (seen) partitions.after(seen, record, result);
    return result;
  };
}
