/**
 * The resolver waits for the registry instead of dead-lettering: an outage (refused, 5xx, 404) is
 * retried with backoff while the Kafka heartbeat goes on, and reported in the state `/readyz` reads
 * and in the metrics; a schema that can never be Avro is kept as its error (dead letters).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { schemaIdOf, WriterSchemas } from '../src/decode/index.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import {
  createSchemaRegistryClient,
  SchemaFetchError,
  type SchemaRegistryClient,
} from '../src/schema-registry/client.ts';
import { createSchemaResolver } from '../src/schema-registry/resolver.ts';

const KEY_SCHEMA = JSON.stringify({ type: 'record', name: 'Key', fields: [{ name: 'id', type: 'string' }] });
const record = (id: number) => {
  const bytes = Buffer.from([0, 0, 0, 0, 0, 2, 0x61]);
  bytes.writeUInt32BE(id, 1);
  return { topic: 'pda.public.sites', partition: 0, offset: '0', key: bytes, value: null };
};

describe('schema resolver', () => {
  it('reads the 4-byte id of the wire header, and nothing from JSON', () => {
    expect(schemaIdOf(record(258).key)).toBe(258);
    expect(schemaIdOf(Buffer.from('{"schema":1}'))).toBeUndefined();
    expect(schemaIdOf('{"a":1}')).toBeUndefined();
    expect(schemaIdOf(Buffer.from([0, 0, 0]))).toBeUndefined();
  });

  it('waits through an outage, heartbeating, and fetches each id once', async () => {
    let calls = 0;
    let heartbeats = 0;
    const client: SchemaRegistryClient = {
      url: 'http://registry.test',
      async fetchSchema() {
        calls++;
        if (calls <= 3) throw new SchemaFetchError('schema registry unreachable: ECONNREFUSED', true);
        return KEY_SCHEMA;
      },
    };
    const schemas = new WriterSchemas();
    const metrics = createMetrics();
    const resolver = createSchemaResolver({
      client,
      schemas,
      logger: pino({ level: 'silent' }),
      metrics,
      minBackoffMs: 10,
      maxBackoffMs: 20,
    });
    const states: boolean[] = [];
    const done = resolver.resolve([record(7), record(7)], {
      heartbeat: async () => {
        heartbeats++;
        states.push(resolver.state().waiting);
      },
    });
    await done;
    expect(schemas.has(7)).toBe(true);
    expect(calls).toBe(4);
    expect(heartbeats).toBeGreaterThanOrEqual(3);
    expect(states.every(Boolean)).toBe(true);
    expect(resolver.state()).toEqual({ waiting: false, since: undefined, error: undefined });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/pda_ingest_schema_registry_fetches_total\{outcome="error"\} 3/);
    expect(text).toMatch(/pda_ingest_schema_registry_waiting 0/);
    await resolver.resolve([record(7)]);
    expect(calls).toBe(4);
  });

  it('stops waiting when the signal aborts (shutdown during an outage)', async () => {
    const client: SchemaRegistryClient = {
      url: undefined,
      fetchSchema: async () => {
        throw new SchemaFetchError('not configured', true);
      },
    };
    const resolver = createSchemaResolver({
      client,
      schemas: new WriterSchemas(),
      logger: pino({ level: 'silent' }),
      minBackoffMs: 5,
    });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    await resolver.resolve([record(9)], { signal: abort.signal });
    expect(resolver.state().waiting).toBe(true);
    expect(resolver.state().error).toBe('not configured');
  });

  it('keeps a schema that is not Avro as its error', async () => {
    const schemas = new WriterSchemas();
    const client = createSchemaRegistryClient({
      url: 'http://registry.test/apis/ccompat/v7',
      timeoutMs: 1000,
      fetch: (async () =>
        new Response(JSON.stringify({ schema: '{}', schemaType: 'PROTOBUF' }))) as typeof fetch,
    });
    await createSchemaResolver({ client, schemas, logger: pino({ level: 'silent' }) }).resolve([record(11)]);
    expect(schemas.get(11)).toEqual({ id: 11, error: 'schema 11 is PROTOBUF, not Avro' });
  });

  it('asks the Confluent-compatible path and treats a 404 as retriable', async () => {
    const urls: string[] = [];
    const client = createSchemaRegistryClient({
      url: 'http://registry.test/apis/ccompat/v7/',
      timeoutMs: 1000,
      fetch: (async (url: string) => {
        urls.push(url);
        return new Response('{"error_code":40403}', { status: 404 });
      }) as typeof fetch,
    });
    const error = await client.fetchSchema(5).catch((e: unknown) => e);
    expect(urls).toEqual(['http://registry.test/apis/ccompat/v7/schemas/ids/5']);
    expect(error).toBeInstanceOf(SchemaFetchError);
    expect((error as SchemaFetchError).retriable).toBe(true);
  });
});
