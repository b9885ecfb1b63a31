// Company-keyed partitions on the real connector (PDA_DATA_PARTITIONS, dev-world/stack/README.md,
// "Partitioned topics"): a private database provisioned as `stack.sh database create` does with 4
// partitions (schema, publication, dev-world/db/partitioned-identity.sql) and a private connector with
// dev-world/stack/connector-partitioned.json for N = 4. Rows of several companies in every table, then
// deletes, a row moved to another company and an update of it, read back from every partition:
// - every tenant event is on partition companyPartition(company_id, 4) (projections' function of
//   PartitionRouting's java hash), its key (id, company_id); a delete on its company's partition;
// - the move is a `d` (before.company_id = old) on the old company's partition and a `c` with every
//   column (the TOASTed notes re-selected, not Debezium's placeholder) on the new one, and a later
//   update that leaves notes alone arrives complete too;
// - the control and heartbeat topics have one partition, every topic is compacted, no tombstones.
import { randomBytes, randomUUID } from 'node:crypto';
import { companyPartition } from '@pda/projections/model';
import { CONTROL_TABLE_NAMES, TABLE_NAMES, TENANT_TABLE_NAMES } from '@pda/schemas/registry';
import { ConfigResourceTypes, type Consumer, type Kafka } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { avroReader } from './src/avro-records.ts';
import { createPartitionedSource, type PartitionedSource } from './src/partitioned-source.ts';
import { replicaIdentities } from './src/replica-identity.ts';
import { kafkaClient, waitFor } from './src/stack-env.ts';

const PARTITIONS = 4;
const PLACEHOLDER = '__debezium_unavailable_value';
const suffix = randomBytes(4).toString('hex');
let source: PartitionedSource;
const topicOf = (table: string) => `${source.topicPrefix}.public.${table}`;

interface Event {
  readonly topic: string;
  readonly partition: number;
  readonly key: Record<string, unknown> | null;
  readonly value: {
    op: string;
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
  } | null;
}

/** Six company ids whose partitions cover at least three of the four: the test needs moves across. */
function companiesOverPartitions(): string[] {
  for (;;) {
    const ids = Array.from({ length: 6 }, () => randomUUID());
    if (new Set(ids.map((id) => companyPartition(id, PARTITIONS))).size >= 3) return ids;
  }
}

const companies = companiesOverPartitions();
const [companyA, companyB, companyC] = (() => {
  // A and B on different partitions (the move crosses partitions), C anywhere.
  const a = companies[0]!;
  const b = companies.find((id) => companyPartition(id, PARTITIONS) !== companyPartition(a, PARTITIONS))!;
  return [a, b, companies.find((id) => id !== a && id !== b)!];
})();
const movedSite = randomUUID();
const deletedSite = randomUUID();
const bigNotes = randomBytes(15_000).toString('base64'); // ~20 KB, barely compressible: TOASTed out of line

let pool: pg.Pool;
let kafka: Kafka;
let consumer: Consumer | undefined;
const events: Event[] = [];

async function insertCompanyRows(client: pg.PoolClient, company: string, sites: string[]): Promise<void> {
  await client.query("INSERT INTO companies (id, name, currency) VALUES ($1, $2, 'EUR')", [
    company,
    `Partitioned ${company.slice(0, 8)}`,
  ]);
  for (const site of sites) {
    await client.query('INSERT INTO sites (id, company_id, name, notes) VALUES ($1, $2, $3, $4)', [
      site,
      company,
      `Site ${site.slice(0, 8)}`,
      site === movedSite ? bigNotes : 'short',
    ]);
  }
  await client.query("INSERT INTO site_contacts (company_id, site_id, name) VALUES ($1, $2, 'Contact')", [
    company,
    sites[0],
  ]);
  await client.query(
    `INSERT INTO services (company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
       subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
     VALUES ($1, 'Ploughing', 'hourly', 80, 'EUR', 'hourly', 50, 'EUR')`,
    [company],
  );
  const category = randomUUID();
  await client.query(
    `INSERT INTO equipment_categories (id, company_id, name, group_name, default_client_rate_amount,
       default_client_rate_currency, default_subcontractor_rate_amount, default_subcontractor_rate_currency)
     VALUES ($1, $2, 'Loaders', 'loaders', 10, 'EUR', 5, 'EUR')`,
    [category, company],
  );
  await client.query("INSERT INTO equipment (company_id, category_id, name) VALUES ($1, $2, 'Loader 1')", [
    company,
    category,
  ]);
  await client.query(
    `INSERT INTO consumables (company_id, name, group_name, default_client_rate_amount,
       default_client_rate_currency, default_subcontractor_rate_amount, default_subcontractor_rate_currency)
     VALUES ($1, 'Salt', 'de_icing', 1, 'EUR', 0.5, 'EUR')`,
    [company],
  );
}

async function transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

beforeAll(async () => {
  kafka = kafkaClient('e2e-partitioned-topics');
  source = createPartitionedSource('partitioned', PARTITIONS);
  pool = source.pool;
  // Before the connector: snapshot reads (`r`), every table with rows, so every topic exists.
  await transaction(async (client) => {
    for (const company of companies) {
      const sites = [randomUUID(), ...(company === companyC ? [deletedSite] : [])];
      await insertCompanyRows(client, company, sites);
    }
    const key = randomUUID();
    await client.query(
      `INSERT INTO api_keys (id, name, last_four, key_sha256) VALUES ($1, 'partitioned e2e', 'abcd', $2)`,
      [key, randomBytes(32).toString('hex')],
    );
    await client.query('INSERT INTO api_key_companies (api_key_id, company_id) VALUES ($1, $2)', [
      key,
      companyA,
    ]);
  });
  await source.startConnector();
  const admin = kafka.admin();
  await admin.connect();
  try {
    await waitFor(
      'every topic of the private connector',
      async () => {
        const topics = new Set(await admin.listTopics());
        return TABLE_NAMES.every((table) => topics.has(topicOf(table)));
      },
      { timeoutMs: 60_000 },
    );
  } finally {
    await admin.disconnect();
  }
  const avro = avroReader();
  consumer = kafka.consumer({ groupId: `e2e-partitioned-${suffix}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await consumer.subscribe({ topics: TABLE_NAMES.map(topicOf), fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const { key, value } = await avro.decodeMessage(topic, partition, message);
      events.push({ topic, partition, key: key as Event['key'], value: value as Event['value'] });
    },
  });
  // Streaming: a delete, a move of a row with a TOASTed column to another company, then an update
  // of that row that leaves the TOASTed column alone.
  await transaction((client) => insertCompanyRows(client, randomUUID(), [movedSite]));
  await pool.query('UPDATE sites SET company_id = $2 WHERE id = $1', [movedSite, companyA]);
  // The reselect reads the row as it is when Debezium handles the event: moved on already, it is
  // not found under (id, A) and the `c` keeps the placeholder (docs/operations.md, "Partitioned
  // topics"). So the next move waits until this one is in Kafka.
  await waitFor(
    'the move to company A',
    () =>
      events.some(
        (e) => e.topic === topicOf('sites') && e.value?.op === 'c' && e.key?.company_id === companyA,
      ),
    { timeoutMs: 60_000 },
  );
  await pool.query('DELETE FROM sites WHERE id = $1', [deletedSite]);
  await pool.query('UPDATE sites SET company_id = $2 WHERE id = $1', [movedSite, companyB]);
  await pool.query("UPDATE sites SET name = 'Renamed after the move' WHERE id = $1", [movedSite]);
  await waitFor(
    'the update after the move',
    () =>
      events.some(
        (e) =>
          e.topic === topicOf('sites') &&
          e.value?.op === 'u' &&
          e.value.after?.name === 'Renamed after the move',
      ),
    { timeoutMs: 90_000 },
  );
});

afterAll(async () => {
  await consumer?.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteGroups([`e2e-partitioned-${suffix}`]).catch(() => {});
  await admin.disconnect();
  await source?.remove(kafka);
});

/** The company an event belongs to: after.company_id, before.company_id for a delete. */
const companyOf = (e: Event) => (e.value?.op === 'd' ? e.value.before : e.value?.after)?.company_id as string;
const sitesEvents = (id: string) => events.filter((e) => e.topic === topicOf('sites') && e.key?.id === id);

describe('company-keyed partitions (PDA_DATA_PARTITIONS=4) on the real connector', () => {
  it('provisions the replica identity (company_id, id) on every tenant table, and only there', async () => {
    const identities = await replicaIdentities(pool, TABLE_NAMES);
    for (const table of TENANT_TABLE_NAMES) {
      expect(identities.get(table), table).toMatchObject({
        kind: 'i',
        index: `${table}_company_id_id_identity`,
      });
    }
    for (const table of CONTROL_TABLE_NAMES) expect(identities.get(table)?.kind, table).toBe('d');
  });

  it('gives the tenant topics 4 partitions, the control and heartbeat topics 1, all compacted', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      // Heartbeats every 10 s (connector.json): the topic appears with the first one.
      await waitFor(
        'the heartbeat topic',
        async () => (await admin.listTopics()).includes(source.heartbeatTopic),
        {
          timeoutMs: 60_000,
        },
      );
      const { topics } = await admin.fetchTopicMetadata({
        topics: [...TABLE_NAMES.map(topicOf), source.heartbeatTopic],
      });
      const counts = Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]));
      expect(counts).toEqual({
        ...Object.fromEntries(TENANT_TABLE_NAMES.map((t) => [topicOf(t), PARTITIONS])),
        ...Object.fromEntries(CONTROL_TABLE_NAMES.map((t) => [topicOf(t), 1])),
        [source.heartbeatTopic]: 1,
      });
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [...TABLE_NAMES.map(topicOf), source.heartbeatTopic].map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['cleanup.policy'],
        })),
      });
      for (const resource of described.resources)
        expect(resource.configEntries[0]?.configValue, resource.resourceName).toBe('compact');
    } finally {
      await admin.disconnect();
    }
  });

  it('puts every tenant event on its company partition, keyed (id, company_id); no tombstones', () => {
    expect(events.filter((e) => e.value === null)).toEqual([]);
    const tenantTopics = new Set(TENANT_TABLE_NAMES.map(topicOf));
    const tenant = events.filter((e) => tenantTopics.has(e.topic));
    for (const table of TENANT_TABLE_NAMES)
      expect(tenant.filter((e) => e.topic === topicOf(table)).length, table).toBeGreaterThanOrEqual(
        companies.length,
      );
    const misplaced = tenant
      .filter((e) => e.partition !== companyPartition(companyOf(e), PARTITIONS))
      .map((e) => `${e.topic} ${e.value?.op} company ${companyOf(e)} on ${e.partition}`);
    expect(misplaced).toEqual([]);
    for (const e of tenant) expect(e.key?.company_id, `${e.topic} key`).toBe(companyOf(e));
    expect(new Set(tenant.map((e) => e.partition)).size).toBeGreaterThanOrEqual(3);
    for (const table of CONTROL_TABLE_NAMES)
      expect(
        events.some((e) => e.topic === topicOf(table) && e.partition === 0),
        table,
      ).toBe(true);
  });

  it('puts a delete on its company partition, with company_id in its before image', () => {
    const deletes = sitesEvents(deletedSite).filter((e) => e.value?.op === 'd');
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.value!.before).toMatchObject({ id: deletedSite, company_id: companyC });
    expect(deletes[0]!.partition).toBe(companyPartition(companyC, PARTITIONS));
  });

  it('turns a move into a delete on the old company partition and a complete create on the new', async () => {
    const { rows } = await pool.query<{ notes: string; name: string }>(
      'SELECT notes, name FROM sites WHERE id = $1',
      [movedSite],
    );
    expect(rows[0]?.notes).toBe(bigNotes);
    const timeline = sitesEvents(movedSite).map((e) => ({
      op: e.value?.op,
      company: companyOf(e),
      partition: e.partition,
    }));
    // Created in a fresh company, moved to A, then to B, then renamed in B: each move a d + c.
    const ops = timeline.map(
      (e) => `${e.op}:${e.company === companyA ? 'A' : e.company === companyB ? 'B' : 'X'}`,
    );
    expect(ops.sort()).toEqual(['c:A', 'c:B', 'c:X', 'd:A', 'd:X', 'u:B'].sort());
    const fromA = sitesEvents(movedSite).find((e) => e.value?.op === 'd' && companyOf(e) === companyA)!;
    expect(fromA.partition).toBe(companyPartition(companyA, PARTITIONS));
    expect(fromA.value!.before).toMatchObject({ id: movedSite, company_id: companyA });
    expect(fromA.key).toEqual({ id: movedSite, company_id: companyA });
    const intoB = sitesEvents(movedSite).find((e) => e.value?.op === 'c' && companyOf(e) === companyB)!;
    expect(intoB.partition).toBe(companyPartition(companyB, PARTITIONS));
    expect(intoB.key).toEqual({ id: movedSite, company_id: companyB });
    const after = intoB.value!.after!;
    expect(after.notes).toBe(bigNotes);
    for (const [column, value] of Object.entries(after)) expect(value, column).not.toBe(PLACEHOLDER);
    expect(after.name).toBe(`Site ${movedSite.slice(0, 8)}`);
  });

  it('delivers an update after the move complete, TOASTed column included', () => {
    const update = sitesEvents(movedSite).find((e) => e.value?.op === 'u')!;
    expect(update.partition).toBe(companyPartition(companyB, PARTITIONS));
    expect(update.value!.after).toMatchObject({ name: 'Renamed after the move', company_id: companyB });
    expect(update.value!.after!.notes).toBe(bigNotes);
    for (const e of sitesEvents(movedSite))
      for (const [column, value] of Object.entries(e.value?.after ?? {}))
        expect(value, column).not.toBe(PLACEHOLDER);
  });
});
