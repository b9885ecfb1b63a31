// Every schemas/<table>.avsc must describe its table as the Avro writer schema the connector uses
// NOW: the schema whose id the newest event of pda.public.<table> carries, read from the registry
// (not the subject's "latest" version, which is wrong once a column was added and dropped again:
// the registry then still lists the wider version last while the connector writes the narrower
// one). Same columns in the same order, nullability, type family, decimal precision and scale.
// The catalog side is schemas/tests/avsc-matches-catalog.e2e.test.ts; this is the wire side.
import { deleteCompanies } from '@pda/dev-world/seed';
import { type ColumnKind, loadTableSchema } from '@pda/schemas';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaRegistryUrl } from './src/avro-records.ts';
import {
  capturedTables,
  insertRows,
  largeNotes,
  newScenarioIds,
  type ScenarioIds,
} from './src/cdc-scenario.ts';
import { type CapturedEvent, collectEvents, endOffsets, keyId } from './src/debezium-capture.ts';
import { connectRequest, kafkaClient, pgPool, stackEnv } from './src/stack-env.ts';

interface Field {
  name: string;
  type: unknown;
}
interface Node {
  type?: unknown;
  name?: string;
  fields?: Field[];
  items?: unknown;
  scale?: number;
  precision?: number;
  'connect.name'?: string;
}

interface WireColumn {
  name: string;
  nullable: boolean;
  kind: ColumnKind | `unmapped ${string}`;
  precision?: number;
  scale?: number;
}

/** The row record's columns of a Debezium envelope's writer schema, as the .avsc describes columns. */
function wireColumns(envelope: Node): WireColumn[] {
  const nonNull = (t: unknown): unknown => (Array.isArray(t) ? t.find((x) => x !== 'null') : t);
  // `before` defines the row record (["null", {record}]), `after` names it.
  const row = envelope
    .fields!.map((f) => nonNull(f.type))
    .find(
      (t): t is Node =>
        typeof t === 'object' && (t as Node).type === 'record' && (t as Node).name === 'Value',
    );
  if (!row) throw new Error('writer schema has no row record');
  return row.fields!.map((field) => {
    const nullable = Array.isArray(field.type) && field.type.includes('null');
    const inner = nonNull(field.type) as Node | string;
    const node: Node = typeof inner === 'string' ? { type: inner } : inner;
    const connect = node['connect.name'];
    let kind: WireColumn['kind'];
    if (connect === 'io.debezium.data.Uuid') kind = 'uuid';
    else if (connect === 'org.apache.kafka.connect.data.Decimal') kind = 'decimal';
    else if (connect === 'io.debezium.time.ZonedTimestamp') kind = 'zoned-timestamp';
    else if (node.type === 'array' && nonNull(node.items) === 'string') kind = 'string-array';
    else if (node.type === 'string') kind = 'string';
    else if (node.type === 'int') kind = 'int';
    else kind = `unmapped ${JSON.stringify(node).slice(0, 80)}`;
    return {
      name: field.name,
      nullable,
      kind,
      ...(kind === 'decimal' ? { precision: node.precision, scale: node.scale } : {}),
    };
  });
}

let pool: pg.Pool;
let kafka: Kafka;
let ids: ScenarioIds;
let avro = false;
/** Per table, the newest event of its topic (this test's last write to it). */
const newest = new Map<string, CapturedEvent>();

beforeAll(async () => {
  const env = stackEnv();
  pool = pgPool(env);
  kafka = kafkaClient('pda-avsc-registry-e2e', env);
  const config = (await connectRequest(`/connectors/${env.connectorName}/config`)) as Record<string, string>;
  avro = config['value.converter'] === 'io.apicurio.registry.utils.converter.AvroConverter';
  if (!avro) return;
  // A fresh write to every table, so each topic's newest event carries the schema in use now.
  const topics = capturedTables.map((table) => `${env.topicPrefix}.public.${table}`);
  const from = await endOffsets(kafka, topics);
  ids = newScenarioIds();
  const ours = new Set(Object.values(ids));
  await insertRows(pool, ids, largeNotes());
  const events = await collectEvents(kafka, {
    topics,
    from,
    match: (e) => e.value !== null && ours.has(keyId(e) ?? ''),
    until: (found) => capturedTables.every((t) => found.some((e) => e.topic.endsWith(`.public.${t}`))),
  });
  for (const event of events) {
    const table = event.topic.split('.').at(-1) as string;
    if ((newest.get(table)?.offset ?? -1) < event.offset) newest.set(table, event);
  }
});

afterAll(async () => {
  if (ids) {
    const client = await pool.connect();
    try {
      await deleteCompanies(client, [ids.company, ids.otherCompany]);
    } finally {
      client.release();
    }
  }
  await pool?.end();
});

describe.each(capturedTables)('%s.avsc against the writer schema of the newest event', (table) => {
  it('agrees on the columns, their order, nullability, type family, precision and scale', async (context) => {
    if (!avro) context.skip(); // PDA_CONNECTOR_FORMAT=json: no writer schemas to compare
    const event = newest.get(table);
    expect(event?.valueBytes, `an Avro event of ${table}`).toBeDefined();
    const id = event!.valueBytes!.readUInt32BE(1);
    // The registry's answer for that id (what ingest fetches), not the subject's latest version.
    const response = await fetch(`${schemaRegistryUrl()}/schemas/ids/${id}`);
    expect(response.status, `schema ${id} in the registry`).toBe(200);
    const writer = JSON.parse(((await response.json()) as { schema: string }).schema) as Node;
    const expected = loadTableSchema(table).columns.map((c) => ({
      name: c.name,
      nullable: c.nullable,
      kind: c.kind,
      ...(c.kind === 'decimal' ? { precision: c.precision, scale: c.scale } : {}),
    }));
    expect(wireColumns(writer)).toEqual(expected);
  });
});
