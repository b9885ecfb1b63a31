// Avro records in tests: the converter settings of each format (dev-world/stack/converters/*.json) and a
// reader that turns wire-format bytes into the plain objects the JSON messages parse to, with the
// writer schemas from the stack's registry (PDA_SCHEMA_REGISTRY_URL, its Confluent-compatible API).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { partitionedConnectorOverlay } from '@pda/dev-world/stack';
import {
  createLogger,
  createSchemaRegistryClient,
  createSchemaResolver,
  type RawRecord,
  readAvro,
  schemaIdOf,
  WriterSchemas,
} from '@pda/ingest';
import { loadStackEnv, repoRoot } from './stack-env.ts';

export type ConverterFormat = 'avro' | 'json' | 'json-schemaless';

/** The key/value converter settings of one format, to override a connector's (connector.json). */
export function converterConfig(format: ConverterFormat): Record<string, string> {
  return JSON.parse(readFileSync(join(repoRoot, `dev-world/stack/converters/${format}.json`), 'utf8'));
}

/**
 * dev-world/stack/connector.json (which writes Avro through the registry) with `overrides` over it; when
 * they name another converter (converterConfig('json')), connector.json's converter settings are
 * dropped first, as dev-world/stack/lib/connect.sh does for PDA_CONNECTOR_FORMAT. `partitions` > 1 adds
 * the company-keyed partitions' settings (partitionedConnectorOverlay) under `overrides`.
 */
export function shippedConnectorConfig(
  overrides: Record<string, string> = {},
  { partitions = 1 }: { partitions?: number } = {},
): Record<string, string> {
  const base = JSON.parse(readFileSync(join(repoRoot, 'dev-world/stack/connector.json'), 'utf8')) as Record<
    string,
    string
  >;
  const converting = /^(key|value)[.]converter/;
  const replaced = Object.keys(overrides).some(
    (name) => name === 'key.converter' || name === 'value.converter',
  );
  const kept = Object.entries(base).filter(([name]) => !(replaced && converting.test(name)));
  return { ...Object.fromEntries(kept), ...partitionedConnectorOverlay(partitions), ...overrides };
}

export function schemaRegistryUrl(): string {
  if (!process.env.PDA_SCHEMA_REGISTRY_URL) loadStackEnv();
  const url = process.env.PDA_SCHEMA_REGISTRY_URL;
  if (!url) throw new Error("PDA_SCHEMA_REGISTRY_URL is not set: run 'bash dev-world/stack/stack.sh up'");
  return url;
}

export interface AvroReader {
  readonly schemas: WriterSchemas;
  /** Fetches the writer schemas the records name (once each). */
  resolve(records: readonly RawRecord[]): Promise<void>;
  /** The record's key or value as an object: Avro decoded, JSON parsed, null stays null. */
  toObject(bytes: Uint8Array | string | null, what: string): unknown;
  /** A consumed message's key and value as objects (toObject), its writer schemas fetched first. */
  decodeMessage(
    topic: string,
    partition: number,
    message: { offset: string; key: Buffer | null; value: Buffer | null },
  ): Promise<{ key: unknown; value: unknown }>;
}

export function avroReader(url = schemaRegistryUrl()): AvroReader {
  const schemas = new WriterSchemas();
  const resolver = createSchemaResolver({
    client: createSchemaRegistryClient({ url, timeoutMs: 5000 }),
    schemas,
    logger: createLogger('warn'),
  });
  const toObject = (bytes: Uint8Array | string | null, what: string): unknown => {
    if (bytes === null) return null;
    const id = schemaIdOf(bytes);
    if (id === undefined)
      return JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
    return readAvro(schemas, id, bytes as Uint8Array, what).value;
  };
  return {
    schemas,
    resolve: (records) => resolver.resolve(records),
    toObject,
    async decodeMessage(topic, partition, { offset, key, value }) {
      await resolver.resolve([{ topic, partition, offset, key, value }]);
      return { key: toObject(key, 'key'), value: toObject(value, 'value') };
    },
  };
}

/** The writer schemas a set of records use, as `{id: schema JSON}` (for fixtures). */
export function usedSchemas(reader: AvroReader, records: readonly RawRecord[]): Record<string, unknown> {
  const used: Record<string, unknown> = {};
  for (const record of records) {
    for (const bytes of [record.key, record.value]) {
      const id = schemaIdOf(bytes);
      const entry = id === undefined ? undefined : reader.schemas.get(id);
      if (entry && 'json' in entry) used[String(id)] = entry.json;
    }
  }
  return used;
}
