/**
 * Debezium's heartbeat records (`heartbeat.interval.ms` in dev-world/stack/connector.json): on
 * `__debezium-heartbeat.<prefix>`, value `{"ts_ms": <ms>}` (inside `{"schema", "payload"}` with
 * JsonConverter's schemas). The connector emits one per interval even while no captured row changes,
 * after the changes it read before; ingest uses them to know how far behind its source it is while
 * the source is idle (kafka/source.ts, ingest/README.md "Freshness and heartbeats").
 */
import { readAvro } from './decode-avro.ts';
import { utf8Text } from './schema-cache.ts';
import { schemaIdOf } from './wire-format.ts';
import type { WriterSchemas } from './writer-schemas.ts';

export function heartbeatTopic(prefix: string): string {
  return `__debezium-heartbeat.${prefix}`;
}

/**
 * The heartbeat's time in ms, or undefined when the value is not a readable heartbeat. Avro values
 * (the connector's value converter writes heartbeats too) need the writer schemas, fetched with
 * their chunk (schema-registry/resolver.ts).
 */
export function heartbeatTsMs(
  value: Uint8Array | string | null,
  writerSchemas?: WriterSchemas,
): number | undefined {
  if (value === null || value.length === 0 || value.length > 64 * 1024) return undefined;
  let parsed: unknown;
  try {
    const id = schemaIdOf(value);
    parsed =
      id === undefined
        ? JSON.parse(utf8Text(value, 'heartbeat'))
        : readAvro(writerSchemas, id, value as Uint8Array, 'heartbeat').value;
  } catch {
    return undefined;
  }
  const body =
    typeof parsed === 'object' && parsed !== null && 'payload' in parsed
      ? (parsed as { payload: unknown }).payload
      : parsed;
  const ts = typeof body === 'object' && body !== null ? (body as { ts_ms?: unknown }).ts_ms : undefined;
  return typeof ts === 'number' && Number.isSafeInteger(ts) && ts > 0 ? ts : undefined;
}
