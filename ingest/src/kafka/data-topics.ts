/**
 * The data topics' Kafka settings and the start-up check that they hold. A replay from the earliest
 * offset (rebuild, a new consumer group) yields the full current state only from a COMPACTED topic:
 * with `cleanup.policy=delete` the events of rows that have not changed since the retention expired
 * are simply gone, and the rebuilt projection lacks them without any error (ingest/README.md,
 * Rebuild; docs/decisions/0008-compacted-cdc-topics.md).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { KafkaAdmin, KafkaClient } from './client.ts';

/**
 * Topic configs for data topics ingest has to create itself (Debezium creates a topic only with its
 * table's first event). The same values as `topic.creation.default.*` in dev-world/stack/connector.json,
 * which Debezium uses for the topics it creates; ingest/tests/data-topics.test.ts keeps them equal.
 */
export const DATA_TOPIC_CONFIG: Readonly<Record<string, string>> = Object.freeze({
  'cleanup.policy': 'compact',
  // A tombstone (and, through min.compaction.lag.ms, the `d` event before it) stays 7 days: ingest
  // applies the `d`, so a worker that falls behind by less than that never misses a delete.
  'delete.retention.ms': '604800000',
  'min.compaction.lag.ms': '604800000',
});

/** DATA_TOPIC_CONFIG as a list of config entries (bench/shared/topic-fill.ts creates topics with it). */
export const DATA_TOPIC_CONFIG_ENTRIES = Object.entries(DATA_TOPIC_CONFIG).map(([name, value]) => ({
  name,
  value,
}));

export interface TopicState {
  readonly topic: string;
  readonly cleanupPolicy: string;
  /** Summed low watermarks: above 0 means records were deleted from the start of the log. */
  readonly lowWatermark: number;
}

/**
 * Creates the missing data topics with DATA_TOPIC_CONFIG; returns their names. Retried as
 * topicStates is: right after its own creation a topic may be unknown to the broker that answers
 * the wait for its leaders (UNKNOWN_TOPIC_OR_PARTITION, which kafkajs's wait does not retry: on a
 * loaded machine a writer's ingest exited on it at start, test/writers-split.e2e.test.ts). Each
 * attempt lists the topics again, so it creates only those still missing.
 */
export async function createMissingTopics(
  client: KafkaClient,
  topics: readonly string[],
  /** A split writer's tenant topics get the ownership file's partitions (kafka/writer-ownership.ts). */
  partitioned?: { readonly topics: readonly string[]; readonly partitions: number },
): Promise<string[]> {
  const created: string[] = [];
  await retryingRetriable(client, async () => {
    const existing = new Set(await client.admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    const wide = missing.filter((t) => partitioned?.topics.includes(t));
    const narrow = missing.filter((t) => !wide.includes(t));
    for (const topic of missing) if (!created.includes(topic)) created.push(topic);
    if (narrow.length > 0) await client.admin.createTopics(narrow, DATA_TOPIC_CONFIG);
    if (wide.length > 0) await client.admin.createTopics(wide, DATA_TOPIC_CONFIG, partitioned?.partitions);
  });
  return created;
}

/**
 * cleanup.policy and low watermark of each topic. Retried: right after createTopics the broker may
 * still answer NOT_LEADER_FOR_PARTITION for the new partitions.
 */
export function topicStates(client: KafkaClient, topics: readonly string[]): Promise<TopicState[]> {
  return retryingRetriable(client, () => describeTopics(client.admin, topics));
}

/** Attempts after the first, and the pause before each (300 ms more each time: 13.5 s in all). */
const RETRIES = 9;
const RETRY_STEP_MS = 300;

/** `attempt` again while it fails with an error the client calls retriable, RETRIES times at most. */
export async function retryingRetriable<T>(client: KafkaClient, attempt: () => Promise<T>): Promise<T> {
  for (let retry = 0; ; retry++) {
    try {
      return await attempt();
    } catch (error) {
      if (!client.isRetriable(error) || retry >= RETRIES) throw error;
      await sleep(RETRY_STEP_MS * (retry + 1));
    }
  }
}

async function describeTopics(admin: KafkaAdmin, topics: readonly string[]): Promise<TopicState[]> {
  const policies = await admin.cleanupPolicies(topics);
  const states: TopicState[] = [];
  for (const topic of topics) {
    const offsets = await admin.topicOffsets(topic);
    states.push({
      topic,
      cleanupPolicy: policies.get(topic) ?? 'unknown',
      lowWatermark: offsets.reduce((sum, p) => sum + Number(p.low), 0),
    });
  }
  return states;
}

export class IncompleteTopicsError extends Error {
  override readonly name = 'IncompleteTopicsError';
}

const compacted = (state: TopicState) => state.cleanupPolicy.split(',').includes('compact');

/**
 * Warns (one line) about data topics that are not compacted. With `refuseTruncated` (rebuild), a
 * topic that is not compacted AND has lost the start of its log fails the run instead: a projection
 * built from it would silently lack rows.
 */
export function checkTopicStates(
  states: readonly TopicState[],
  logger: Logger,
  refuseTruncated: boolean,
): void {
  const loose = states.filter((s) => !compacted(s));
  if (loose.length === 0) return;
  const truncated = loose.filter((s) => s.lowWatermark > 0);
  if (refuseTruncated && truncated.length > 0) {
    throw new IncompleteTopicsError(
      `data topics not compacted and already missing their oldest events: ${truncated
        .map((s) => `${s.topic} (cleanup.policy=${s.cleanupPolicy}, low watermark ${s.lowWatermark})`)
        .join(
          ', ',
        )}; a rebuild from them would lack rows. Compact them (bash dev-world/stack/stack.sh up, ingest/README.md Rebuild) and re-snapshot the connector`,
    );
  }
  logger.warn(
    { topics: loose.map((s) => `${s.topic} (cleanup.policy=${s.cleanupPolicy})`) },
    'data topics are not compacted: a rebuild or a new consumer group misses rows whose events expired (ingest/README.md, Rebuild)',
  );
}
