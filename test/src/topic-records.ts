// Everything a topic holds right now, read from its earliest offset by a throwaway consumer group:
// what a rebuild would see. Used to show what the log cleaner removed.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { type AvroReader, avroReader } from './avro-records.ts';

export interface TopicRecord {
  readonly offset: number;
  /** The key's bytes as text (JSON) or base64 (Avro): only compared for equality. */
  readonly key: string | null;
  /** The key's `id` column (JSON with or without inline schema, or Avro). */
  readonly id: string | undefined;
  /** Debezium's `op`, or 'tombstone' for a null value. */
  readonly op: string;
}

/** A key or value as an object: JSON (inline schema unwrapped) or Avro (wire format, byte 0). */
async function decoded(avro: AvroReader, topic: string, bytes: Buffer, what: string) {
  if (bytes[0] === 0) {
    await avro.resolve([{ topic, partition: 0, offset: '0', key: bytes, value: null }]);
    return avro.toObject(bytes, what) as Record<string, unknown>;
  }
  const parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  return ('payload' in parsed && 'schema' in parsed ? parsed.payload : parsed) as Record<string, unknown>;
}

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
    const avro = avroReader();
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ message }) => {
            const offset = Number(message.offset);
            const { key, value } = message;
            const id = key === null ? undefined : (await decoded(avro, topic, key, 'key')).id;
            const op = value === null ? 'tombstone' : (await decoded(avro, topic, value, 'value')).op;
            records.push({
              offset,
              key: key === null ? null : key.toString(key[0] === 0 ? 'base64' : 'utf8'),
              id: typeof id === 'string' ? id : undefined,
              op: typeof op === 'string' ? op : 'none',
            });
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
