// A replay from the earliest offset after the log cleaner has removed the old events still yields
// the full current state (ingest/README.md, Rebuild; docs/decisions/0008-compacted-cdc-topics.md).
// A private connector (own prefix and slot) writes compacted topics whose segments roll every
// second and are cleaned at once; rows are snapshotted, updated many times, some deleted; once the
// snapshot and intermediate events are really gone from the log, `rebuild` builds a projection from
// the earliest offsets, and it equals PostgreSQL: every row and column, deleted rows absent.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deleteCompanies } from '@pda/dev-world/seed';
import { createLogger, loadAvscTypes, parseConfig, rebuild } from '@pda/ingest';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateConnector, startPrivateConnector } from './src/private-connector.ts';
import { expectProjectionEqualsPostgres } from './src/projection-vs-postgres.ts';
import { inTransaction, kafkaClient, pgPool, stackEnv, waitFor } from './src/stack-env.ts';
import { readTopic, type TopicRecord } from './src/topic-records.ts';

const SITES = 30;
const UPDATED = 10; // sites 0..9 are updated ROUNDS times each
const ROUNDS = 20;
const DELETED = [8, 9, 20, 21]; // two updated, two never changed since the snapshot

let pool: pg.Pool;
let kafka: Kafka;
let connector: PrivateConnector | undefined;
const company: string = randomUUID();
const siteIds = Array.from({ length: SITES + 1 }, (): string => randomUUID()); // the last one rolls segments

beforeAll(() => {
  pool = pgPool();
  kafka = kafkaClient('e2e-compacted-replay');
});

afterAll(async () => {
  await connector?.remove(kafka);
  const client = await pool.connect();
  try {
    await deleteCompanies(client, [company]);
  } finally {
    client.release();
  }
  await pool.end();
});

/** Key of a site's records, compared by the id inside (the connector's format, JSON or Avro). */
const siteIdOf = (record: TopicRecord): string | undefined => record.id;

async function highWatermark(topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

async function updateSites(round: number): Promise<void> {
  await inTransaction(
    pool,
    siteIds
      .slice(0, UPDATED)
      .map((id, i): [string, unknown[]] => [
        'UPDATE sites SET name = $2, area = $3, city = $4 WHERE id = $1',
        [id, `Site ${i} v${round}`, (round * 10 + i + 0.25).toFixed(2), `City ${round}`],
      ]),
  );
}

describe('a replay from the earliest offset of compacted topics', () => {
  it('yields the full current state after the old segments were cleaned', async () => {
    // Rows that exist before the connector starts: they reach Kafka only as snapshot reads.
    await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, 'Compaction e2e', 'EUR')", [
      company,
    ]);
    await pool.query(
      `INSERT INTO sites (id, company_id, name, area, latitude, longitude)
       SELECT id, $1, 'Site ' || (n - 1), n * 1.5, 45.123456, -0.000001
         FROM unnest($2::uuid[]) WITH ORDINALITY AS s(id, n)`,
      [company, siteIds],
    );

    connector = await startPrivateConnector('compact', {
      'table.include.list': 'public.companies,public.sites',
      'snapshot.mode': 'initial',
      // Snapshot only this test's company; streaming still carries every tenant's changes.
      'snapshot.select.statement.overrides': 'public.companies,public.sites',
      'snapshot.select.statement.overrides.public.companies': `SELECT * FROM public.companies WHERE id = '${company}'`,
      'snapshot.select.statement.overrides.public.sites': `SELECT * FROM public.sites WHERE company_id = '${company}'`,
      'heartbeat.interval.ms': '0',
      // The log cleaner at work within seconds instead of days: segments roll after 1 s (on the
      // next append), any dirty share is worth cleaning, nothing is protected by age, and
      // tombstones may go 1 s after their segment was cleaned. The broker's cleaner still sleeps
      // log.cleaner.backoff.ms (15 s by default) between passes.
      'topic.creation.default.segment.ms': '1000',
      'topic.creation.default.min.cleanable.dirty.ratio': '0.01',
      'topic.creation.default.min.compaction.lag.ms': '0',
      'topic.creation.default.delete.retention.ms': '1000',
    });
    const sitesTopic = `${connector.topicPrefix}.public.sites`;
    const snapshot = await waitFor(
      'the snapshot of every site',
      async () => {
        const records = await readTopic(kafka, sitesTopic).catch(() => []);
        const mine = records.filter((r) => r.op === 'r' && siteIds.includes(siteIdOf(r) ?? ''));
        return mine.length === SITES + 1 && mine;
      },
      { timeoutMs: 90_000, intervalMs: 1000 },
    );

    for (let round = 1; round <= ROUNDS; round++) await updateSites(round);
    await pool.query("UPDATE companies SET name = 'Compaction e2e, renamed' WHERE id = $1", [company]);
    await pool.query('DELETE FROM sites WHERE id = ANY($1::uuid[])', [DELETED.map((i) => siteIds[i])]);

    // Wait for the cleaner. Every append after a second rolls the segment, making the previous one
    // cleanable: keep appending (one "roller" site) until the snapshot reads of the updated sites,
    // their intermediate updates and the delete events are gone from the log.
    const roller = siteIds[SITES] as string;
    const updatedIds = new Set(siteIds.slice(0, UPDATED));
    const deletedIds = new Set(DELETED.map((i) => siteIds[i]));
    let rolls = 0;
    const cleaned = await waitFor(
      'the log cleaner to remove the superseded events',
      async () => {
        await pool.query('UPDATE sites SET city = $2 WHERE id = $1', [roller, `roll ${++rolls}`]);
        const records = await readTopic(kafka, sitesTopic);
        const mine = records.filter((r) => updatedIds.has(siteIdOf(r) ?? ''));
        const superseded = mine.filter((r) => r.op === 'r' || r.op === 'u').length - (UPDATED - 2);
        const deletes = records.filter((r) => r.op === 'd' && deletedIds.has(siteIdOf(r) ?? '')).length;
        return superseded === 0 && deletes === 0 && records;
      },
      { timeoutMs: 240_000, intervalMs: 1500 },
    );

    // Old segments really are gone: fewer records than were written, the snapshot reads of the
    // updated and deleted sites among them, while the untouched sites still have theirs.
    const high = await highWatermark(sitesTopic);
    expect(cleaned.length).toBeLessThan(high);
    const remaining = new Set(cleaned.map((r) => r.offset));
    const goneSnapshotReads = snapshot.filter(
      (r) => updatedIds.has(siteIdOf(r) ?? '') || deletedIds.has(siteIdOf(r) ?? ''),
    );
    expect(goneSnapshotReads).toHaveLength(UPDATED + 2);
    for (const r of goneSnapshotReads)
      expect(remaining.has(r.offset), `snapshot read @${r.offset}`).toBe(false);
    const untouched = snapshot.filter(
      (r) => !updatedIds.has(siteIdOf(r) ?? '') && !deletedIds.has(siteIdOf(r) ?? ''),
    );
    expect(untouched.length).toBeGreaterThan(10);
    for (const r of untouched) {
      if (siteIdOf(r) !== roller) expect(remaining.has(r.offset), `snapshot read @${r.offset}`).toBe(true);
    }

    // A rebuild from the earliest offsets into a fresh data directory.
    const dataDir = join(mkdtempSync(join(tmpdir(), 'compacted-replay-')), 'current');
    const env = stackEnv();
    const config = parseConfig({
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
      INGEST_TOPIC_PREFIX: connector.topicPrefix,
      INGEST_GROUP_ID: `e2e-compacted-${randomUUID()}`,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_PORT: '0',
      INGEST_LOG_LEVEL: 'warn',
      // Caught up means everything written before the rebuild started is applied.
      INGEST_READY_MAX_LAG: '0',
    });
    await rebuild(config, { logger: createLogger('warn'), avscTypes: await loadAvscTypes() });

    const compared = await expectProjectionEqualsPostgres(pool, dataDir, company);
    expect(compared).toBe(SITES + 1 - DELETED.length);
  }, 420_000);
});
