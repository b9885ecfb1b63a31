// Writing real-shaped Debezium events (from @pda/ingest's encodeEvent) into private topics of the
// stack's Kafka, for the e2e tests that drive ingest without the connector; those topics made and
// removed around such a test.
import { type Kafka, Partitioners } from 'kafkajs';

export interface EncodedEvent {
  readonly topic: string;
  readonly key: string;
  readonly value: string;
}

/** Events with inline schemas are ~4.5 KB: 100 per request stays under the broker's 1 MB limit. */
const EVENTS_PER_REQUEST = 100;

/** Produces `events` in order (per topic), a request of at most EVENTS_PER_REQUEST at a time. */
export async function produceEvents(kafka: Kafka, events: readonly EncodedEvent[]): Promise<void> {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();
  try {
    for (let i = 0; i < events.length; i += EVENTS_PER_REQUEST) {
      const slice = events.slice(i, i + EVENTS_PER_REQUEST);
      const byTopic = new Map<string, { key: string; value: string }[]>();
      for (const { topic, key, value } of slice) {
        const messages = byTopic.get(topic) ?? [];
        messages.push({ key, value });
        byTopic.set(topic, messages);
      }
      await producer.sendBatch({
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Creates the private `topics`, one partition each, and waits until they have leaders. */
export async function createTopics(kafka: Kafka, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: topics.map((topic) => ({ topic, numPartitions: 1 })),
    waitForLeaders: true,
  });
  await admin.disconnect();
}

/**
 * Deletes the private `topics` after a test; a failed delete is ignored (the topics may never have
 * been made). Nothing to do without a client: the test ended before it made one.
 */
export async function deleteTopics(kafka: Kafka | undefined, topics: readonly string[]): Promise<void> {
  const admin = kafka?.admin();
  if (!admin) return;
  await admin.connect();
  await admin.deleteTopics({ topics: [...topics] }).catch(() => {});
  await admin.disconnect();
}
