// Kafka offsets are committed only after the durability flush (ingest/README.md, "Durability"):
// what SQLite committed must be on disk before its offsets tell the group it is done, or a power
// cut (or a dying file system) loses applied changes whose events are never read again. Observed
// on the real broker: while the barrier holds, the group's committed offset does not move although
// every record was applied; once it resolves, the offsets follow. Removing the barrier's call before
// the offset commit (ingest/src/kafka/source.ts, createOffsetCommitter) fails this test.
import { randomUUID } from 'node:crypto';
import { createLogger } from '@pda/ingest';
import { createKafkaSource } from '@pda/ingest/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kafkaClient, stackEnv, waitFor } from './src/stack-env.ts';

const topic = `e2e-durable-${randomUUID()}`;
const groupId = `e2e-durable-${randomUUID()}`;
const RECORDS = 5;
const kafka = kafkaClient('e2e-durable-commit');
const admin = kafka.admin();

async function committedOffset(): Promise<string | undefined> {
  const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return entry?.partitions.find((p) => p.partition === 0)?.offset;
}

beforeAll(async () => {
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, n) => ({ key: `k${n}`, value: `v${n}` })),
  });
  await producer.disconnect();
});

afterAll(async () => {
  await admin.deleteTopics({ topics: [topic] }).catch(() => {});
  await admin.deleteGroups([groupId]).catch(() => {});
  await admin.disconnect();
});

describe('offsets wait for the durability barrier', () => {
  it('nothing is committed while the flush is pending, everything once it is done', async () => {
    let release!: () => void;
    const flushed = new Promise<void>((resolve) => {
      release = resolve;
    });
    let barrierCalls = 0;
    let applied = 0;
    const source = createKafkaSource({
      brokers: stackEnv().kafkaBrokers,
      clientId: groupId,
      groupId,
      topics: [topic],
      fromBeginning: true,
      maxBatchEvents: 1000,
      fetchMaxBytes: 1024 * 1024,
      sessionTimeoutMs: 10_000,
      partitionsInFlight: 1,
      maxEventsInFlight: 10_000,
      logger: createLogger('silent'),
      durable: () => {
        barrierCalls += 1;
        return flushed;
      },
    });
    const stop = new AbortController();
    const running = source.run(
      {
        prepare: (records) => records,
        commit: async (records) => {
          applied += records.length;
          return undefined;
        },
      },
      stop.signal,
    );
    try {
      await waitFor(
        'every record applied and the barrier asked',
        async () => applied === RECORDS && barrierCalls > 0,
        {
          timeoutMs: 60_000,
          intervalMs: 100,
        },
      );
      // Give a commit that ignored the barrier time to reach the broker.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await committedOffset()).toBe('-1');
      release();
      await waitFor(
        'the offsets committed after the flush',
        async () => (await committedOffset()) === String(RECORDS),
        {
          timeoutMs: 30_000,
          intervalMs: 100,
        },
      );
    } finally {
      release();
      stop.abort();
      await running;
    }
  });
});
