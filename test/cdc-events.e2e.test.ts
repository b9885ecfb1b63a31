// The real pipeline's event shapes: rows written to PostgreSQL, read back from Kafka as Debezium
// produced them (pgoutput, precise decimals, default REPLICA IDENTITY) in the format the stack's
// connector writes: Avro through the schema registry as shipped (decoded with the writer schemas
// from the registry), or JsonConverter with inline schemas (PDA_CONNECTOR_FORMAT=json).
import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capturedTables,
  deleteRows,
  expectedSnapshotCounts,
  expectedStreamCounts,
  insertRows,
  largeNotes,
  newScenarioIds,
  type ScenarioIds,
  scenarioKeyIds,
  snapshotSelects,
  updateRows,
  values,
} from './src/cdc-scenario.ts';
import {
  type CapturedEvent,
  collectEvents,
  endOffsets,
  keyId,
  opOf,
  payloadOf,
  reached,
} from './src/debezium-capture.ts';
import { startSnapshotConnector } from './src/snapshot-connector.ts';
import { connectRequest, kafkaClient, pgPool, stackEnv } from './src/stack-env.ts';

type Row = Record<string, unknown>;
interface Envelope {
  before: Row | null;
  after: Row | null;
  op: string;
  source: Row;
  ts_ms: number;
}

const isoUtc = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;

/**
 * Precise decimal: big-endian two's-complement unscaled integer (base64 in JSON, raw bytes in Avro);
 * scale from the schema.
 */
function decodeDecimal(encoded: unknown, scale: number): string {
  const bytes =
    typeof encoded === 'string' ? Buffer.from(encoded, 'base64') : Buffer.from(encoded as Uint8Array);
  let unscaled = 0n;
  for (const byte of bytes) unscaled = (unscaled << 8n) | BigInt(byte);
  if (bytes.length > 0 && (bytes[0]! & 0x80) !== 0) unscaled -= 1n << BigInt(bytes.length * 8);
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}

/** The scale of a decimal column in the event's schema: the Avro writer schema, or the inline one. */
function schemaScale(event: CapturedEvent, column: string): number {
  if (event.valueSchema !== undefined) return avroScale(event.valueSchema, column);
  const schema = (event.value as { schema: { fields: Array<{ field: string; fields?: Row[] }> } }).schema;
  const after = schema.fields.find((f) => f.field === 'after')!;
  const field = after.fields!.find((f) => f.field === column) as {
    name: string;
    parameters: { scale: string };
  };
  expect(field.name).toBe('org.apache.kafka.connect.data.Decimal');
  return Number(field.parameters.scale);
}

/**
 * `scale` of a decimal column of the Avro envelope's row record: `before` defines the record
 * (["null", {record}]) and `after` names it (["null", "Value"]).
 */
function avroScale(envelopeSchema: unknown, column: string): number {
  type Node = { type?: unknown; name?: string; fields?: Node[]; scale?: number; 'connect.name'?: string };
  const nonNull = (t: unknown): unknown => (Array.isArray(t) ? t.find((x) => x !== 'null') : t);
  const record = (envelopeSchema as Node)
    .fields!.map((f) => nonNull(f.type))
    .find(
      (t): t is Node =>
        typeof t === 'object' && (t as Node).type === 'record' && (t as Node).name === 'Value',
    )!;
  const field = nonNull(record.fields!.find((f) => f.name === column)!.type) as Node;
  expect(field['connect.name']).toBe('org.apache.kafka.connect.data.Decimal');
  expect(field.type).toBe('bytes');
  return field.scale!;
}

/** A record key's bytes as comparable text (JSON text, or the Avro bytes as base64). */
const keyText = (event: CapturedEvent | undefined) => event?.keyJson ?? event?.keyBytes?.toString('base64');

const envelope = (event: CapturedEvent) => payloadOf(event.value) as unknown as Envelope;
const table = (event: CapturedEvent) => event.topic.split('.').at(-1);

describe('Debezium events from the real stack', () => {
  let pool: pg.Pool;
  let kafka: Kafka;
  let ids: ScenarioIds;
  let snapshot: CapturedEvent[];
  let stream: CapturedEvent[];
  const privatePrefix = `pda_e2e_${randomBytes(4).toString('hex')}`;

  const find = (events: CapturedEvent[], tableName: string, op: string, id: string) => {
    const found = events.filter((e) => table(e) === tableName && opOf(e) === op && keyId(e) === id);
    expect(found, `${tableName} ${op} ${id}`).toHaveLength(1);
    return found[0]!;
  };

  beforeAll(async () => {
    const env = stackEnv();
    pool = pgPool(env);
    kafka = kafkaClient('pda-cdc-events-e2e', env);
    ids = newScenarioIds();
    const ours = scenarioKeyIds(ids);
    const isOurs = (e: CapturedEvent) => ours.has(keyId(e) ?? '');
    const sharedTopics = capturedTables.map((t) => `${env.topicPrefix}.public.${t}`);
    const streamStart = await endOffsets(kafka, sharedTopics);
    await insertRows(pool, ids, largeNotes());

    // Rows that exist before a connector starts arrive as snapshot reads. A private topic prefix
    // keeps these `r` events out of the topics the other e2e tests consume.
    const connector = await startSnapshotConnector({
      topicPrefix: privatePrefix,
      selects: snapshotSelects(ids),
    });
    const privateTopics = capturedTables.map((t) => `${privatePrefix}.public.${t}`);
    try {
      snapshot = await collectEvents(kafka, {
        topics: privateTopics,
        match: isOurs,
        until: (events) => reached(events, expectedSnapshotCounts),
      });
    } finally {
      await connector.remove();
      const admin = kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: privateTopics }).catch(() => undefined);
      await admin.disconnect();
    }

    await updateRows(pool, ids);
    await deleteRows(pool, ids);
    stream = await collectEvents(kafka, {
      topics: sharedTopics,
      from: streamStart,
      match: isOurs,
      until: (events) => reached(events, expectedStreamCounts),
    });
  });

  afterAll(async () => {
    await pool?.end();
  });

  it('writes the format its connector is configured with (shipped: Avro through the registry)', async () => {
    const config = (await connectRequest(`/connectors/${stackEnv().connectorName}/config`)) as Row;
    const avro = config['value.converter'] === 'io.apicurio.registry.utils.converter.AvroConverter';
    for (const event of stream.filter((e) => e.value !== null)) {
      // Avro: the registry's wire format (byte 0, the writer schema's id) and an Envelope record.
      expect(event.valueBytes !== undefined, `${event.topic}@${event.offset}`).toBe(avro);
      if (avro) expect((event.valueSchema as Row).name).toBe('Envelope');
      else expect(Object.keys(event.value as Row).sort()).toEqual(['payload', 'schema']);
    }
  });

  it('emits a snapshot read `r` for every table, with after and no before', () => {
    for (const t of capturedTables) {
      const reads = snapshot.filter((e) => table(e) === t);
      expect(reads.length, t).toBeGreaterThan(0);
      for (const event of reads) {
        const payload = envelope(event);
        expect(payload.op).toBe('r');
        expect(payload.before).toBeNull();
        expect(payload.after).not.toBeNull();
        // source.snapshot is a string ("first", "true", "last", ...), never a boolean.
        expect(['first', 'first_in_data_collection', 'true', 'last_in_data_collection', 'last']).toContain(
          payload.source.snapshot,
        );
      }
    }
    expect(envelope(find(snapshot, 'companies', 'r', ids.company)).after?.name).toBe('Northwind Snow & Ice');
  });

  it('emits creates `c` with the source position, one transaction for the whole insert', () => {
    // All inserts but the key-change's create, which belongs to a later transaction.
    const moved = (e: CapturedEvent) => (payloadOf(e.key) as Row).company_id === ids.otherCompany;
    const creates = stream.filter((e) => opOf(e) === 'c' && !(table(e) === 'api_key_companies' && moved(e)));
    expect(new Set(creates.map(table))).toEqual(new Set(capturedTables));
    for (const event of creates) {
      const payload = envelope(event);
      expect(payload.before).toBeNull();
      expect(payload.source.snapshot).toBe('false');
      expect(typeof payload.source.lsn).toBe('number');
      const sequence = JSON.parse(payload.source.sequence as string) as unknown[];
      expect(sequence).toHaveLength(2);
      expect(sequence.every((lsn) => lsn === null || typeof lsn === 'string')).toBe(true);
    }
    expect(new Set(creates.map((e) => envelope(e).source.txId)).size).toBe(1);
    const created = find(stream, 'companies', 'c', ids.company);
    expect(payloadOf(created.key)).toEqual({ id: ids.company });
    if (created.keyBytes === undefined) expect((created.key as { schema: Row }).schema.type).toBe('struct');
  });

  it('emits updates `u` with before: null under default REPLICA IDENTITY', () => {
    const updates = stream.filter((e) => opOf(e) === 'u');
    expect(new Set(updates.map(table))).toEqual(
      new Set(capturedTables.filter((t) => t !== 'api_key_companies')),
    );
    for (const event of updates) expect(envelope(event).before).toBeNull();
    expect(envelope(find(stream, 'companies', 'u', ids.company)).after?.name).toBe(
      'Northwind Snow & Ice LLC',
    );
  });

  it('marks an untouched TOASTed value as __debezium_unavailable_value', () => {
    const update = envelope(find(stream, 'sites', 'u', ids.site));
    expect(update.after?.name).toBe('Empire Plaza lot (north)');
    expect(update.after?.notes).toBe('__debezium_unavailable_value');
    // A small value is not TOASTed: it comes along unchanged.
    expect(envelope(find(stream, 'sites', 'u', ids.siteWithoutArea)).after?.notes).toBe('gate code 4411');
  });

  it('emits deletes `d` carrying only the key, each followed by a tombstone', () => {
    const deletes = stream.filter((e) => opOf(e) === 'd');
    const expectedDeletes = Object.entries(expectedStreamCounts).filter(([k]) => k.endsWith(':d'));
    expect(deletes.length).toBe(expectedDeletes.reduce((sum, [, n]) => sum + n, 0));
    for (const event of deletes) {
      const payload = envelope(event);
      expect(payload.after).toBeNull();
      const tombstone = stream.find(
        (e) => e.topic === event.topic && e.partition === event.partition && e.offset === event.offset + 1,
      );
      expect(tombstone?.value, `tombstone after ${event.topic}@${event.offset}`).toBeNull();
      expect(keyText(tombstone)).toBe(keyText(event));
    }
    const site = envelope(find(stream, 'sites', 'd', ids.site)).before!;
    expect(site.id).toBe(ids.site);
    // Not the real company: only key columns are logged; NOT NULL columns hold fillers.
    expect(site.company_id).not.toBe(ids.company);
    expect(site.area).toBeNull();
  });

  it('turns a primary-key change into delete + tombstone of the old key and create of the new', () => {
    const grants = stream.filter((e) => table(e) === 'api_key_companies');
    const [created, removed, tombstone, moved] = grants;
    expect(grants.map(opOf).slice(0, 4)).toEqual(['c', 'd', 'tombstone', 'c']);
    expect((payloadOf(removed!.key) as Row).company_id).toBe(ids.company);
    expect(keyText(tombstone)).toBe(keyText(removed));
    expect((payloadOf(moved!.key) as Row).company_id).toBe(ids.otherCompany);
    expect(envelope(moved!).source.txId).toBe(envelope(removed!).source.txId);
    expect(created!.offset).toBeLessThan(removed!.offset);
  });

  it('encodes numeric as precise decimals with the scale in the schema (writer or inline)', () => {
    const event = find(stream, 'sites', 'c', ids.site);
    const after = envelope(event).after!;
    expect(decodeDecimal(after.area, schemaScale(event, 'area'))).toBe(values.area);
    expect(decodeDecimal(after.latitude, schemaScale(event, 'latitude'))).toBe(values.latitude);
    expect(decodeDecimal(after.longitude, schemaScale(event, 'longitude'))).toBe(values.longitude);
    const small = find(stream, 'sites', 'u', ids.siteWithoutArea);
    expect(decodeDecimal(envelope(small).after!.area, 2)).toBe('0.01');
    expect(decodeDecimal(envelope(small).after!.latitude, schemaScale(small, 'latitude'))).toBe('-0.000001');
    const service = find(stream, 'services', 'u', ids.service);
    expect(
      decodeDecimal(envelope(service).after!.client_rate_amount, schemaScale(service, 'client_rate_amount')),
    ).toBe(values.updatedServiceRate);
  });

  it('encodes timestamptz as ISO 8601 strings in UTC', () => {
    const after = envelope(find(stream, 'sites', 'c', ids.site)).after!;
    expect(after.geocoded_at).toBe(values.geocodedAtIso);
    expect(after.created_at).toMatch(isoUtc);
    expect(after.updated_at).toMatch(isoUtc);
    const key = envelope(find(stream, 'api_keys', 'c', ids.apiKey)).after!;
    expect(key.expires_at).toBe('2030-01-01T00:00:00.000000Z');
    expect(key.scopes).toEqual(['sites:read', 'services:read']);
  });
});
