/**
 * The Kafka source's rules against a fake client (src/kafka/client.ts is the seam): chunks are
 * handed over without waiting, offsets are committed only up to what was applied, a failed chunk
 * pauses its partition and seeks back to its first offset, and stopping drains and commits. The
 * real client is exercised by the e2e tests (test/ingest-durable-commit.e2e.test.ts,
 * test/ingest-apply-failure.e2e.test.ts, test/ingest-recovery.e2e.test.ts).
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { RawRecord } from '../src/decode/index.ts';
import type {
  FetchedBatch,
  GroupMember,
  KafkaClient,
  PartitionOffset,
  TopicPartitions,
} from '../src/kafka/client.ts';
import type { RecordsHandler } from '../src/kafka/hand-over.ts';
import { createKafkaSource } from '../src/kafka/source.ts';

const TOPIC = 'pda.public.sites';

function batchOf(partition: number, from: number, count: number): FetchedBatch {
  const records: RawRecord[] = Array.from({ length: count }, (_, i) => ({
    topic: TOPIC,
    partition,
    offset: String(from + i),
    key: null,
    value: null,
  }));
  return { topic: TOPIC, partition, records, highWatermark: String(from + count) };
}

/** A client that delivers `batches` once, in order, and records what the source asks of it. */
function fakeClient(batches: readonly FetchedBatch[]) {
  const seen = {
    commits: [] as PartitionOffset[][],
    paused: [] as TopicPartitions[][],
    seeks: [] as PartitionOffset[],
    handedOver: [] as string[],
    left: [] as GroupMember[],
    stopped: false,
  };
  const client: KafkaClient = {
    admin: {
      connect: async () => {},
      disconnect: async () => {},
      listTopics: async () => [TOPIC],
      createTopics: async () => {},
      cleanupPolicies: async (topics) => new Map(topics.map((t) => [t, 'compact'])),
      topicOffsets: async () => [{ partition: 0, low: '0', high: '0' }],
      groupOffsets: async () => [],
    },
    consumer(options, events) {
      return {
        async start(eachBatch) {
          events.joined({ groupId: options.groupId, memberId: 'member-1' });
          for (const batch of batches) {
            await eachBatch(batch, {
              heartbeat: async () => {},
              owned: () => !seen.stopped,
              handedOver: (offset) => seen.handedOver.push(offset),
            });
          }
        },
        commit: async (offsets) => {
          seen.commits.push([...offsets]);
        },
        pause: (where) => seen.paused.push([...where]),
        resume: () => {},
        seek: (at) => seen.seeks.push(at),
        stop: async () => {
          seen.stopped = true;
        },
      };
    },
    leaveGroup: async (member) => {
      seen.left.push(member);
      return 'left';
    },
    isAuthenticationFailure: () => false,
    isRetriable: () => false,
  };
  return { client, seen };
}

function sourceWith(client: KafkaClient, extra: { onApplyFailure?: () => { logged: boolean } } = {}) {
  return createKafkaSource({
    client,
    brokers: ['fake:9092'],
    clientId: 'test',
    groupId: 'g',
    topics: [TOPIC],
    fromBeginning: true,
    maxBatchEvents: 2,
    fetchMaxBytes: 1024,
    sessionTimeoutMs: 10_000,
    partitionsInFlight: 1,
    maxEventsInFlight: 100,
    logger: pino({ level: 'silent' }),
    ...extra,
  });
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
};

describe('the Kafka source over the client interface', () => {
  it('hands chunks over without waiting, commits only what was applied, drains at stop', async () => {
    const { client, seen } = fakeClient([batchOf(0, 0, 5)]);
    const source = sourceWith(client);
    const chunks: string[][] = [];
    const release: Array<() => void> = [];
    const handler: RecordsHandler<RawRecord[]> = {
      prepare: (records) => records,
      commit: (records) =>
        new Promise<undefined>((resolve) => {
          chunks.push(records.map((r) => r.offset));
          release.push(() => resolve(undefined));
        }),
    };
    const stop = new AbortController();
    const running = source.run(handler, stop.signal);
    await until(() => chunks.length === 3);
    // Every chunk handed over (the client may fetch on), none applied: nothing committed.
    expect(chunks).toEqual([['0', '1'], ['2', '3'], ['4']]);
    expect(seen.handedOver).toEqual(['1', '3', '4']);
    expect(source.connected()).toBe(true);
    expect(seen.commits).toEqual([]);
    // The second chunk applied before the first: still nothing, the run must be whole.
    release[1]?.();
    await new Promise((r) => setTimeout(r, 10));
    expect(seen.commits).toEqual([]);
    release[0]?.();
    await until(() => seen.commits.length > 0);
    expect(seen.commits.at(-1)).toEqual([{ topic: TOPIC, partition: 0, offset: '4' }]);
    stop.abort();
    release[2]?.();
    await running;
    expect(seen.commits.at(-1)).toEqual([{ topic: TOPIC, partition: 0, offset: '5' }]);
    expect(seen.stopped).toBe(true);
    expect(source.connected()).toBe(false);
  });

  it("tells each chunk's follow-up the round that committed its own offsets, not an earlier one", async () => {
    const { client, seen } = fakeClient([batchOf(0, 0, 5)]);
    const source = sourceWith(client);
    const told: { first: string; committedWith: string | undefined }[] = [];
    const release: Array<() => void> = [];
    const handler: RecordsHandler<RawRecord[]> = {
      prepare: (records) => records,
      commit: (records) =>
        new Promise((resolve) => {
          const first = records[0]?.offset ?? '';
          release.push(() =>
            resolve({
              committed: (round) => {
                // The offset Kafka holds when the follow-up hears: past this chunk's last record.
                told.push({ first, committedWith: round && seen.commits.at(-1)?.[0]?.offset });
              },
            }),
          );
        }),
    };
    const stop = new AbortController();
    const running = source.run(handler, stop.signal);
    await until(() => release.length === 3);
    release[0]?.();
    await until(() => told.length === 1);
    expect(told).toEqual([{ first: '0', committedWith: '2' }]);
    release[1]?.();
    release[2]?.();
    await until(() => told.length === 3);
    expect(
      told
        .slice(1)
        .map((t) => t.first)
        .sort(),
    ).toEqual(['2', '4']);
    for (const t of told.slice(1)) expect(Number(t.committedWith)).toBeGreaterThan(Number(t.first));
    stop.abort();
    await running;
  });

  it('a failed chunk pauses its partition and seeks back to its first offset; nothing past it commits', async () => {
    const { client, seen } = fakeClient([batchOf(3, 10, 4)]);
    const failures: unknown[] = [];
    const source = sourceWith(client, {
      onApplyFailure: () => {
        failures.push('told');
        return { logged: true };
      },
    });
    let calls = 0;
    const handler: RecordsHandler<RawRecord[]> = {
      prepare: (records) => records,
      commit: async () => {
        calls++;
        if (calls === 1) throw new Error('disk full');
        return undefined;
      },
    };
    const stop = new AbortController();
    const running = source.run(handler, stop.signal);
    await until(() => seen.seeks.length === 1);
    expect(seen.seeks).toEqual([{ topic: TOPIC, partition: 3, offset: '10' }]);
    expect(seen.paused[0]).toEqual([{ topic: TOPIC, partitions: [3] }]);
    expect(failures).toEqual(['told']);
    stop.abort();
    await running;
    // The second chunk (12-13) was never handed over: its partition was blocked at 10.
    expect(calls).toBe(1);
    expect(seen.commits).toEqual([]);
  });
});
