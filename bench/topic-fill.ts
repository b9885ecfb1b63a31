/**
 * Fresh data topics on the running stack's Kafka and a producer that fills them fast: what the
 * ingest benchmarks consume (ingest-throughput.ts, tenant-fanout.ts).
 */
import { DATA_TOPIC_CONFIG_ENTRIES } from '@pda/ingest';
import type { EncodedEvent } from '@pda/ingest/testing';
import type { Admin, Kafka } from 'kafkajs';

/** One partition each, created as the connector creates its topics (compacted; nothing is old
 * enough to be compacted during a run), so the worker sees what it sees in production. */
export async function createDataTopics(admin: Admin, topics: readonly string[]): Promise<void> {
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: 1, configEntries: DATA_TOPIC_CONFIG_ENTRIES })),
    waitForLeaders: true,
  });
}

/** Produces every event in order per topic; returns the bytes of keys and values sent. */
export async function fillTopics(kafka: Kafka, events: Iterable<EncodedEvent>): Promise<number> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  let bytes = 0;
  // Record batches stay under the broker's 1 MB message.max.bytes: at most 200 events and 900 KB
  // per send (all in one topic when a run of one table comes, e.g. a site per company), 8 in flight.
  let pending: EncodedEvent[] = [];
  let pendingBytes = 0;
  const inFlight = new Set<Promise<unknown>>();
  const flush = async () => {
    const byTopic = new Map<string, { key: string; value: string }[]>();
    for (const e of pending) {
      const list = byTopic.get(e.topic) ?? [];
      list.push({ key: e.key, value: e.value });
      byTopic.set(e.topic, list);
    }
    pending = [];
    pendingBytes = 0;
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    const send = producer.sendBatch({ acks: 1, topicMessages });
    inFlight.add(send);
    send.finally(() => inFlight.delete(send)).catch(() => {});
    if (inFlight.size >= 8) await Promise.race(inFlight);
  };
  try {
    for (const e of events) {
      const size = Buffer.byteLength(e.value) + Buffer.byteLength(e.key);
      bytes += size;
      pendingBytes += size;
      pending.push(e);
      if (pending.length >= 200 || pendingBytes >= 900 * 1024) await flush();
    }
    await flush();
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
  return bytes;
}
