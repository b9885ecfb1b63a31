/**
 * Fresh data topics on the running stack's Kafka and a producer that fills them fast: what the
 * ingest benchmarks consume (ingest/throughput.ts, tenants/fanout.ts).
 */
import { DATA_TOPIC_CONFIG_ENTRIES } from '@pda/ingest';
import type { EncodedEvent } from '@pda/ingest/testing';
import type { Admin, CompressionTypes, Kafka } from 'kafkajs';

/** One partition each (or `partitionsOf(topic)`), created as the connector creates its topics
 * (compacted; nothing is old enough to be compacted during a run), so the worker sees what it sees
 * in production. */
export async function createDataTopics(
  admin: Admin,
  topics: readonly string[],
  partitionsOf: (topic: string) => number = () => 1,
): Promise<void> {
  await admin.createTopics({
    topics: topics.map((topic) => ({
      topic,
      numPartitions: partitionsOf(topic),
      configEntries: DATA_TOPIC_CONFIG_ENTRIES,
    })),
    waitForLeaders: true,
  });
}

export interface FillOptions {
  /** Producer compression of each record batch (kafkajs writes gzip itself). */
  readonly compression?: CompressionTypes;
  /**
   * Record batches of one topic of at most this many uncompressed bytes, like a Kafka producer's
   * `batch.size` (16,384 by default, what Kafka Connect's producer uses): what compression sees.
   * Unset: up to 200 events / 900 KB per send over all topics (fastest fill).
   */
  readonly batchBytes?: number;
  /** The partition of each event (the connector's PartitionRouting); unset: the key's partition. */
  readonly partitionOf?: (event: EncodedEvent) => number;
}

/** Produces every event in order per topic; returns the bytes of keys and values sent. */
export async function fillTopics(
  kafka: Kafka,
  events: Iterable<EncodedEvent>,
  options: FillOptions = {},
): Promise<number> {
  if (options.batchBytes !== undefined && options.partitionOf !== undefined)
    throw new Error('fillTopics: batchBytes and partitionOf together are not supported');
  if (options.batchBytes !== undefined)
    return fillInProducerBatches(kafka, events, options.batchBytes, options);
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  let bytes = 0;
  // Record batches stay under the broker's 1 MB message.max.bytes: at most 200 events and 900 KB
  // per send (all in one topic when a run of one table comes, e.g. a site per company), 8 in flight.
  let pending: EncodedEvent[] = [];
  let pendingBytes = 0;
  const inFlight = new Set<Promise<unknown>>();
  const flush = async () => {
    const byTopic = new Map<string, { key: string; value: string; partition?: number }[]>();
    for (const e of pending) {
      const list = byTopic.get(e.topic) ?? [];
      const partition = options.partitionOf?.(e);
      list.push({ key: e.key, value: e.value, ...(partition === undefined ? {} : { partition }) });
      byTopic.set(e.topic, list);
    }
    pending = [];
    pendingBytes = 0;
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    const send = producer.sendBatch({
      acks: 1,
      topicMessages,
      ...(options.compression === undefined ? {} : { compression: options.compression }),
    });
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

/** fillTopics with one record batch per send: per topic, up to `batchBytes` uncompressed bytes. */
async function fillInProducerBatches(
  kafka: Kafka,
  events: Iterable<EncodedEvent>,
  batchBytes: number,
  options: FillOptions,
): Promise<number> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  let bytes = 0;
  const pending = new Map<string, { messages: { key: string; value: string }[]; bytes: number }>();
  const inFlight = new Set<Promise<unknown>>();
  const send = async (topic: string) => {
    const batch = pending.get(topic);
    if (!batch || batch.messages.length === 0) return;
    pending.delete(topic);
    const sent = producer.send({
      topic,
      acks: 1,
      messages: batch.messages,
      ...(options.compression === undefined ? {} : { compression: options.compression }),
    });
    inFlight.add(sent);
    sent.finally(() => inFlight.delete(sent)).catch(() => {});
    if (inFlight.size >= 16) await Promise.race(inFlight);
  };
  try {
    for (const e of events) {
      const size = Buffer.byteLength(e.value) + Buffer.byteLength(e.key);
      bytes += size;
      let batch = pending.get(e.topic);
      // The producer closes a batch when the next record would not fit (a larger one goes alone).
      if (batch && batch.bytes + size > batchBytes) {
        await send(e.topic);
        batch = undefined;
      }
      if (!batch) {
        batch = { messages: [], bytes: 0 };
        pending.set(e.topic, batch);
      }
      batch.messages.push({ key: e.key, value: e.value });
      batch.bytes += size;
    }
    for (const topic of [...pending.keys()]) await send(topic);
    await Promise.all(inFlight);
  } finally {
    await producer.disconnect();
  }
  return bytes;
}
