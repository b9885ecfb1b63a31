// Company-keyed partitions on the testcontainers stack (test/src/container-stack.ts with
// PDA_DATA_PARTITIONS=4): the postgres container's init applies the (company_id, id) replica
// identity, the connector is registered with the partitioned overlay, and every sites event, the
// delete and the two halves of a move included, is on its company's partition
// (`companyPartition`, the api's and ingest's side of PartitionRouting).
import { randomUUID } from 'node:crypto';
import { registerKafkajsCodecs } from '@pda/ingest';
import { companyPartition } from '@pda/projections/model';
import { type Consumer, Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { avroReader } from '../src/avro-records.ts';
import type { ContainerStack } from '../src/container-stack.ts';
import { replicaIdentities } from '../src/replica-identity.ts';
import { waitFor } from '../src/stack-env.ts';

const PARTITIONS = 4;
// Before testcontainers loads (container-stack.ts is imported below, not at the top): its reaper
// image cannot be pulled here, and the stack's stop() removes what it started.
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';

interface SiteEvent {
  readonly partition: number;
  readonly op: string;
  readonly company: string;
  readonly id: string;
}

let stack: ContainerStack;
let pool: pg.Pool;
let kafka: Kafka;
let consumer: Consumer | undefined;
const events: SiteEvent[] = [];
const companies = Array.from({ length: 6 }, () => randomUUID());
const sites = companies.map(() => randomUUID());

beforeAll(async () => {
  const previous = process.env.PDA_DATA_PARTITIONS;
  process.env.PDA_DATA_PARTITIONS = String(PARTITIONS);
  try {
    const { startContainerStack } = await import('../src/container-stack.ts');
    stack = await startContainerStack();
  } finally {
    if (previous === undefined) delete process.env.PDA_DATA_PARTITIONS;
    else process.env.PDA_DATA_PARTITIONS = previous;
  }
  pool = new pg.Pool({
    host: '127.0.0.1',
    port: Number(stack.env.PDA_PG_PORT),
    user: 'pda',
    password: 'pda',
    database: 'pda',
    max: 2,
  });
  pool.on('error', () => {});
  for (const [i, company] of companies.entries()) {
    await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, $2, 'EUR')", [
      company,
      `TC ${i}`,
    ]);
    await pool.query('INSERT INTO sites (id, company_id, name) VALUES ($1, $2, $3)', [
      sites[i],
      company,
      `Site ${i}`,
    ]);
  }
  // A delete, and a move to a company of another partition (a `d` and a `c` on two partitions).
  await pool.query('DELETE FROM sites WHERE id = $1', [sites[0]]);
  const from = companies[1] as string;
  const to = companies.find(
    (c) => companyPartition(c, PARTITIONS) !== companyPartition(from, PARTITIONS),
  ) as string;
  await pool.query('UPDATE sites SET company_id = $2 WHERE id = $1', [sites[1], to]);

  registerKafkajsCodecs();
  kafka = new Kafka({ brokers: [stack.env.PDA_KAFKA_BROKERS as string], logLevel: logLevel.NOTHING });
  const avro = avroReader(stack.env.PDA_SCHEMA_REGISTRY_URL);
  consumer = kafka.consumer({ groupId: `tc-partitioned-${randomUUID()}`, maxWaitTimeInMs: 200 });
  await consumer.connect();
  await waitFor(
    'the sites topic',
    async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        return (await admin.listTopics()).includes('pda.public.sites');
      } finally {
        await admin.disconnect();
      }
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  await consumer.subscribe({ topics: ['pda.public.sites'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      if (message.value === null) return;
      const decoded = await avro.decodeMessage(topic, partition, message);
      const value = decoded.value as {
        op: string;
        before: { id: string; company_id: string } | null;
        after: { id: string; company_id: string } | null;
      };
      const row = value.op === 'd' ? value.before : value.after;
      events.push({ partition, op: value.op, company: row?.company_id ?? '', id: row?.id ?? '' });
    },
  });
  // Six creates, the delete, and the move's `d` and `c`.
  await waitFor('every sites event', () => events.length >= companies.length + 3, {
    timeoutMs: 120_000,
    intervalMs: 250,
  });
}, 600_000);

afterAll(async () => {
  await consumer?.disconnect();
  await pool?.end();
  await stack?.stop();
}, 120_000);

describe('the testcontainers stack with PDA_DATA_PARTITIONS=4', () => {
  it('gives the tenant tables the (company_id, id) replica identity', async () => {
    const identities = await replicaIdentities(pool, ['sites', 'companies']);
    expect([...identities].map(([relname, { index }]) => ({ relname, index }))).toEqual([
      { relname: 'companies', index: null },
      { relname: 'sites', index: 'sites_company_id_id_identity' },
    ]);
  });

  it('routes every sites event to its company partition, the delete and both halves of the move too', async () => {
    expect(events.map((e) => e.op).sort()).toEqual(['c', 'c', 'c', 'c', 'c', 'c', 'c', 'd', 'd']);
    for (const event of events)
      expect(event.partition, JSON.stringify(event)).toBe(companyPartition(event.company, PARTITIONS));
    const moved = events.filter((e) => e.id === sites[1]);
    expect(new Set(moved.map((e) => e.partition)).size).toBe(2);
  });

  it('creates the tenant topics with 4 partitions and the control topics with one', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({
        topics: ['pda.public.sites', 'pda.public.companies'],
      });
      expect(Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]))).toEqual({
        'pda.public.sites': 4,
        'pda.public.companies': 1,
      });
    } finally {
      await admin.disconnect();
    }
  });
});
