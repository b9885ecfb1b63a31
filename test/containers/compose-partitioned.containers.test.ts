// Company-keyed partitions on the container path (PDA_DATA_PARTITIONS=4, dev-world/stack/README.md,
// "Partitioned topics"): `compose.sh up` provisions the replica identity in PostgreSQL's init and
// registers the connector with the partitioned overlay; the tenant topics have 4 partitions and the
// control topics one; the one ingest of the project (holding every partition) serves the demo
// company through the api, and a site deleted or moved to another company in PostgreSQL (a `d` on
// the demo company's partition, a `c` on the other's) leaves its pages.
import { randomUUID } from 'node:crypto';
import { TENANT_TABLE_NAMES } from '@pda/schemas/registry';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicaIdentities } from '../src/replica-identity.ts';
import { waitFor } from '../src/stack-env.ts';
import { type ComposeProject, startComposeProject } from './compose-project.ts';

let stack: ComposeProject;
let companyId: string;

beforeAll(async () => {
  stack = await startComposeProject('pdapart', { PDA_DATA_PARTITIONS: '4' });
  companyId = (await stack.get<{ data: { company: { id: string } } }>('/v1/me')).body.data.company.id;
}, 900_000);

afterAll(async () => {
  await stack?.down();
}, 300_000);

describe('docker-compose with PDA_DATA_PARTITIONS=4', () => {
  it('gives every tenant table the (company_id, id) replica identity', async () => {
    const expected = [...TENANT_TABLE_NAMES, 'companies'];
    const identities = await replicaIdentities(stack.pool, expected);
    // Every table expected, not only those the query found (a missing one would pass unseen).
    expect([...identities.keys()].sort()).toEqual([...expected].sort());
    for (const [table, identity] of identities) {
      expect(identity.index, table).toBe(table === 'companies' ? null : `${table}_company_id_id_identity`);
    }
  });

  it('creates the tenant topics with 4 partitions and the control topics with one', async () => {
    const kafka = new Kafka({ brokers: [`127.0.0.1:${stack.ports.kafka}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({
        topics: ['pda.public.sites', 'pda.public.companies'],
      });
      const partitions = Object.fromEntries(topics.map((t) => [t.name, t.partitions.length]));
      expect(partitions).toEqual({ 'pda.public.sites': 4, 'pda.public.companies': 1 });
    } finally {
      await admin.disconnect();
    }
  });

  it('serves the demo company, and a site deleted or moved to another company leaves its pages', async () => {
    const { rows } = await stack.pool.query<{ id: string }>(
      'SELECT id::text FROM sites WHERE company_id = $1 ORDER BY id LIMIT 2',
      [companyId],
    );
    const [deleted, moved] = rows.map((r) => r.id) as [string, string];
    const expected = Number(
      (
        await stack.pool.query<{ n: string }>('SELECT count(*) AS n FROM sites WHERE company_id = $1', [
          companyId,
        ])
      ).rows[0]?.n,
    );
    await waitFor(
      'every site of the demo company projected',
      async () => (await stack.siteIds()).length === expected,
      {
        timeoutMs: 180_000,
        intervalMs: 1_000,
      },
    );
    const other = randomUUID();
    await stack.pool.query(
      "INSERT INTO companies (id, name, currency) VALUES ($1, 'Partitioned compose', 'EUR')",
      [other],
    );
    await stack.pool.query('DELETE FROM site_contacts WHERE site_id = $1', [deleted]);
    await stack.pool.query('DELETE FROM sites WHERE id = $1', [deleted]);
    await stack.pool.query('UPDATE site_contacts SET company_id = $2 WHERE site_id = $1', [moved, other]);
    await stack.pool.query('UPDATE sites SET company_id = $2 WHERE id = $1', [moved, other]);
    const ids = await waitFor(
      'the deleted and the moved site gone from the demo company',
      async () => {
        const seen = await stack.siteIds();
        return seen.length === expected - 2 ? seen : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect(ids).not.toContain(deleted);
    expect(ids).not.toContain(moved);
    expect((await stack.get(`/v1/sites/${moved}`)).status).toBe(404);
  });
});
