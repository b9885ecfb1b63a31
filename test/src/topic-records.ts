// Everything a topic holds right now, read from its earliest offset by a throwaway consumer group:
// what a rebuild would see. Used to show what the log cleaner removed.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';

export interface TopicRecord {
  readonly offset: number;
  readonly key: string | null;
  /** Debezium's `op`, or 'tombstone' for a null value. */
  readonly op: string;
}

const opOf = (value: Buffer | null): string => {
  if (value === null) return 'tombstone';
  const parsed = JSON.parse(value.toString('utf8')) as { payload?: { op?: string } };
  return parsed.payload?.op ?? 'none';
};

/** The records of a single-partition topic, in offset order, up to its current high watermark. */
export async function readTopic(kafka: Kafka, topic: string): Promise<TopicRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  const groupId = `e2e-read-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 200 });
  try {
    const [partition] = await admin.fetchTopicOffsets(topic);
    const high = Number(partition?.high ?? 0);
    if (high === 0) return [];
    const records: TopicRecord[] = [];
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const offset = Number(message.offset);
            records.push({ offset, key: message.key?.toString('utf8') ?? null, op: opOf(message.value) });
            // The last record of a log is never compacted away (it is in the active segment).
            if (offset >= high - 1) resolve();
          },
        })
        .catch(reject);
    });
    return records;
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => {});
    await admin.disconnect();
  }
}
