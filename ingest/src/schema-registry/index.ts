/**
 * The Avro path's pieces for one worker: the writer schemas (kept across generation swaps: an id
 * always names the same schema), the resolver that fetches them, and what `/readyz` says about the
 * registry. JSON records need none of it; the format is detected per record (decode/wire-format.ts).
 */
import type { Logger } from 'pino';
import { heartbeatTsMs, type RawRecord, WriterSchemas } from '../decode/index.ts';
import type { IngestMetrics } from '../observability/metrics.ts';
import { createSchemaRegistryClient } from './client.ts';
import { createSchemaResolver, type ResolveHooks } from './resolver.ts';
import type { SchemaRegistryConfig } from './settings.ts';

export { createSchemaRegistryClient, SchemaFetchError, type SchemaRegistryClient } from './client.ts';
export { createSchemaResolver, type RegistryState, type SchemaResolver } from './resolver.ts';

export interface AvroSupport {
  readonly writerSchemas: WriterSchemas;
  resolve(records: readonly RawRecord[], hooks: ResolveHooks): Promise<void>;
  readHeartbeat(value: Uint8Array | null): number | undefined;
  /** False while consumption waits for the registry (`/readyz` 503). */
  ready(): boolean;
  /** `/readyz` detail: `ok`, or why consumption waits. */
  health(): { status: 'ok' | 'waiting'; url: string | null; error?: string; waiting_since?: string };
}

export function createAvroSupport(
  config: SchemaRegistryConfig,
  logger: Logger,
  metrics: IngestMetrics,
): AvroSupport {
  const writerSchemas = new WriterSchemas();
  const client = createSchemaRegistryClient({
    url: config.url,
    timeoutMs: config.timeoutMs,
    username: config.username,
    password: config.password,
    ca: config.ca?.pem,
  });
  const resolver = createSchemaResolver({
    client,
    schemas: writerSchemas,
    logger: logger.child({ component: 'schema-registry' }),
    metrics,
  });
  return {
    writerSchemas,
    resolve: (records, hooks) => resolver.resolve(records, hooks),
    readHeartbeat: (value) => heartbeatTsMs(value, writerSchemas),
    ready: () => !resolver.state().waiting,
    health() {
      const state = resolver.state();
      if (!state.waiting) return { status: 'ok', url: client.url ?? null };
      return {
        status: 'waiting',
        url: client.url ?? null,
        ...(state.error ? { error: state.error } : {}),
        ...(state.since ? { waiting_since: new Date(state.since).toISOString() } : {}),
      };
    },
  };
}
