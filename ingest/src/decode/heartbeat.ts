/**
 * Debezium's heartbeat records (`heartbeat.interval.ms` in ops/stack/connector.json): on
 * `__debezium-heartbeat.<prefix>`, value `{"ts_ms": <ms>}` (inside `{"schema", "payload"}` with
 * JsonConverter's schemas). The connector emits one per interval even while no captured row changes,
 * after the changes it read before; ingest uses them to know how far behind its source it is while
 * the source is idle (kafka/source.ts, ingest/README.md "Freshness and heartbeats").
 */
import { utf8Text } from './schema-cache.ts';

export function heartbeatTopic(prefix: string): string {
  return `__debezium-heartbeat.${prefix}`;
}

/** The heartbeat's time in ms, or undefined when the value is not a readable heartbeat. */
export function heartbeatTsMs(value: Uint8Array | string | null): number | undefined {
  if (value === null || value.length === 0 || value.length > 64 * 1024) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Text(value, 'heartbeat'));
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
