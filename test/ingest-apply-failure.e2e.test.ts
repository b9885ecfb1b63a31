// ingest's failure path against real Kafka: while another process holds control.sqlite's write lock,
// every apply call fails (SQLITE_BUSY after the busy timeout). The partition must pause, seek back
// and retry with backoff, and commit no offset past what is applied — neither while it retries nor
// when the worker is stopped in the middle of the failure (kafkajs has resolved the offsets of every
// chunk handed over; they must not reach Kafka, see ingest/src/kafka/source.ts). A new worker on the
// same group, once the lock is released, ends with every event applied exactly as produced —
// nothing lost, nothing doubled, no dead letter.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, createMetrics, createWorker, loadAvscTypes, parseConfig } from '@pda/ingest';
import { encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import { openCompanyReader, openControlReader } from '@pda/projections/read';
import { openControlWriter } from '@pda/projections/write';
import { afterAll, describe, expect, it } from 'vitest';
import { produceEvents } from './src/produce-events.ts';
import { kafkaClient, stackEnv, waitFor } from './src/stack-env.ts';

const COMPANIES = 3;
const SITES = 3_000;
const prefix = `applyfail${Date.now()}`;
const topics = [`${prefix}.public.companies`, `${prefix}.public.sites`];
const kafka = kafkaClient('apply-failure-test');
const admin = kafka.admin();

afterAll(async () => {
  await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
});

describe('apply failure on the real stack', () => {
  it('pauses, retries, stops and converges without loss once the lock is gone; offsets never run ahead', async () => {
    await admin.connect();
    await admin.createTopics({
      topics: topics.map((topic) => ({ topic, numPartitions: 1 })),
      waitForLeaders: true,
    });
    let lsn = 10_000;
    const companyIds = Array.from({ length: COMPANIES }, (_, c) => uuidFor(c, 41));
    await produceEvents(
      kafka,
      companyIds.map((id, c) =>
        encodeEvent(
          { table: 'companies', op: 'r', row: sampleRow('companies', c, id), lsn: lsn++, tsMs: Date.now() },
          { topicPrefix: prefix },
        ),
      ),
    );

    const logLines: string[] = [];
    const logger = createLogger(
      'info',
      'ingest',
      new Writable({
        write(chunk, _encoding, done) {
          logLines.push(String(chunk));
          done();
        },
      }),
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'apply-failure-'));
    const groupId = `${prefix}-ingest`;
    const avscTypes = await loadAvscTypes();
    const startWorker = () => {
      const worker = createWorker(
        parseConfig({
          INGEST_KAFKA_BROKERS: stackEnv().kafkaBrokers.join(','),
          INGEST_SCHEMA_REGISTRY_URL: stackEnv().schemaRegistryUrl,
          INGEST_GROUP_ID: groupId,
          INGEST_TOPIC_PREFIX: prefix,
          INGEST_DATA_DIR: dataDir,
          INGEST_ADMIN_PORT: '0',
          INGEST_MAX_BATCH_EVENTS: '500',
        }),
        { logger, avscTypes, metrics: createMetrics() },
      );
      return { worker, running: worker.run() };
    };
    const committed = async (topic: string) =>
      (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]?.partitions[0]?.offset;
    let current = startWorker();
    try {
      await waitFor('the companies in control.sqlite', () => {
        const control = openControlReader(dataDir);
        try {
          return (control.prepare('SELECT count(*) FROM companies').pluck().get() as number) === COMPANIES;
        } finally {
          control.close();
        }
      });

      // Another writer holds control.sqlite: every apply call now fails after the busy timeout.
      const blocker = openControlWriter(dataDir);
      blocker.exec('BEGIN IMMEDIATE');
      const sites = Array.from({ length: SITES }, (_, i) =>
        sampleRow('sites', i, companyIds[i % COMPANIES] as string),
      );
      await produceEvents(
        kafka,
        sites.map((row) =>
          encodeEvent(
            { table: 'sites', op: 'c', row, lsn: lsn++, tsMs: Date.now() },
            { topicPrefix: prefix },
          ),
        ),
      );
      await waitFor(
        'a failed apply',
        () => logLines.some((l) => l.includes('apply failed; partition paused')),
        {
          timeoutMs: 30_000,
        },
      );
      // No site can be applied while the lock lasts, so no site offset may be committed ('-1': none).
      expect(await committed(topics[1] as string)).toBe('-1');
      // Stopped in the middle of the failure: the drain and the consumer's disconnect commit what is
      // applied (the companies) and nothing of the sites kafkajs resolved at hand-over.
      current.worker.stop();
      await current.running;
      expect(logLines.some((l) => l.includes('ingest stopped: drained and disconnected'))).toBe(true);
      expect(await committed(topics[0] as string)).toBe(String(COMPANIES));
      expect(await committed(topics[1] as string)).toBe('-1');
      blocker.exec('ROLLBACK');
      blocker.close();
      current = startWorker();

      const countSites = () =>
        companyIds.reduce((sum, id) => {
          const db = openCompanyReader(dataDir, id);
          try {
            return sum + (db.prepare('SELECT count(*) FROM sites').pluck().get() as number);
          } finally {
            db.close();
          }
        }, 0);
      await waitFor('every site applied', () => countSites() === SITES, { timeoutMs: 90_000 });
      await waitFor(
        'the consumer group committed up to the end of the topic',
        async () => (await committed(topics[1] as string)) === String(SITES),
        { timeoutMs: 30_000 },
      );

      // Exactly what was produced, in the right files; no dead letter.
      for (const [c, id] of companyIds.entries()) {
        const db = openCompanyReader(dataDir, id);
        const stored = db.prepare('SELECT id, name, city FROM sites ORDER BY id').all();
        db.close();
        const expected = sites
          .filter((_, i) => i % COMPANIES === c)
          .map((r) => ({ id: r.id, name: r.name, city: r.city }))
          .sort((a, b) => String(a.id).localeCompare(String(b.id)));
        expect(stored).toEqual(expected);
      }
      const control = openControlReader(dataDir);
      expect(control.prepare('SELECT count(*) FROM dead_letters').pluck().get()).toBe(0);
      control.close();
    } catch (error) {
      // What ingest logged last and where the group's offsets stand: the story of a failure.
      console.log(logLines.slice(-15).join(''));
      console.log(JSON.stringify(await admin.fetchOffsets({ groupId, topics })));
      throw error;
    } finally {
      current.worker.stop();
      await current.running;
    }
  }, 180_000);
});
