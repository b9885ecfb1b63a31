/**
 * KafkaClient (../client.ts) on kafkajs 2.2.4: the only module of ingest's code, with its siblings
 * in this folder, that imports kafkajs. Each method is a direct mapping; the rules (what is handed
 * over, when offsets commit, the takeover) live in ../ and do not know which client runs them.
 */
import kafkajs, { type Admin, type Consumer, Kafka, type KafkaMessage } from 'kafkajs';
import type { RawRecord } from '../../decode/index.ts';
import type {
  GroupConsumer,
  GroupConsumerEvents,
  GroupConsumerOptions,
  KafkaAdmin,
  KafkaClient,
  KafkaClientOptions,
  TopicPartitions,
} from '../client.ts';
import { registerCodecs } from './codecs.ts';
import { isRetriable, isSaslAuthenticationFailure } from './errors.ts';
import { fixedPartitionAssigner } from './fixed-assigner.ts';
import { leaveGroupAs } from './leave-group.ts';
import { kafkaLogCreator } from './log-bridge.ts';

// kafkajs is CommonJS: Node's ESM loader does not see this export as a named one.
const { ConfigResourceTypes } = kafkajs;

/** Broker gone: kafkajs retries with exponential backoff (0.3 s … 30 s) before a restart. */
const BROKER_RETRY = { initialRetryTime: 300, maxRetryTime: 30_000, retries: 10 };

export function createKafkajsClient(options: KafkaClientOptions): KafkaClient {
  registerCodecs();
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...options.security,
    logCreator: kafkaLogCreator(options.logger),
    retry: BROKER_RETRY,
  });
  return {
    admin: kafkajsAdmin(kafka.admin()),
    consumer: (consumerOptions, events) => kafkajsConsumer(kafka, consumerOptions, events),
    leaveGroup: (member) => leaveGroupAs(kafka, member),
    isAuthenticationFailure: isSaslAuthenticationFailure,
    isRetriable,
  };
}

function kafkajsAdmin(admin: Admin): KafkaAdmin {
  return {
    connect: () => admin.connect(),
    disconnect: () => admin.disconnect(),
    listTopics: () => admin.listTopics(),
    async createTopics(topics, config, partitions) {
      const configEntries = Object.entries(config).map(([name, value]) => ({ name, value }));
      await admin.createTopics({
        topics: topics.map((topic) => ({
          topic,
          configEntries,
          ...(partitions !== undefined && { numPartitions: partitions }),
        })),
        waitForLeaders: true,
      });
    },
    async cleanupPolicies(topics) {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: false,
        resources: topics.map((name) => ({
          type: ConfigResourceTypes.TOPIC,
          name,
          configNames: ['cleanup.policy'],
        })),
      });
      const policies = new Map<string, string>();
      for (const resource of resources) {
        const entry = resource.configEntries.find((e) => e.configName === 'cleanup.policy');
        if (entry) policies.set(resource.resourceName, entry.configValue);
      }
      return policies;
    },
    async topicOffsets(topic) {
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.map(({ partition, low, high }) => ({ partition, low, high }));
    },
    async groupOffsets(groupId, topics) {
      const committed = await admin.fetchOffsets({ groupId, topics: [...topics] });
      return committed.flatMap(({ topic, partitions }) =>
        partitions.map(({ partition, offset }) => ({ topic, partition, offset })),
      );
    },
  };
}

const toRecord = (topic: string, partition: number, m: KafkaMessage): RawRecord => ({
  topic,
  partition,
  offset: m.offset,
  key: m.key ?? null,
  value: m.value ?? null,
  timestampMs: Number(m.timestamp),
});

const topicPartitions = (where: readonly TopicPartitions[]) =>
  where.map(({ topic, partitions }) => (partitions ? { topic, partitions: [...partitions] } : { topic }));

function kafkajsConsumer(
  kafka: Kafka,
  options: GroupConsumerOptions,
  events: GroupConsumerEvents,
): GroupConsumer {
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    sessionTimeout: options.sessionTimeoutMs,
    heartbeatInterval: Math.floor(options.sessionTimeoutMs / 10),
    maxBytes: options.fetchMaxBytes,
    // A short fetch long-poll keeps a drain (stop, generation swap) within about a second.
    maxWaitTimeInMs: 1000,
    maxBytesPerPartition: options.fetchMaxBytes,
    retry: BROKER_RETRY,
    ...(options.assignment && { partitionAssigners: [fixedPartitionAssigner(options.assignment)] }),
  });
  const { CRASH, GROUP_JOIN, DISCONNECT, STOP } = consumer.events;
  consumer.on(GROUP_JOIN, ({ payload }) =>
    events.joined({ groupId: payload.groupId, memberId: payload.memberId }),
  );
  consumer.on(DISCONNECT, () => events.disconnected());
  consumer.on(STOP, () => events.disconnected());
  // kafkajs restarts the consumer itself after retriable failures (`restart`).
  consumer.on(CRASH, ({ payload }) => events.crashed(payload.error, payload.restart));
  return {
    async start(eachBatch) {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning });
      await consumer.run({
        eachBatchAutoResolve: false,
        // Offsets are committed through commit() only: what kafkajs resolves (handedOver) is what
        // it may fetch past, not what is applied (../in-flight.ts).
        autoCommit: false,
        partitionsConsumedConcurrently: options.partitionsInFlight,
        eachBatch: ({ batch, resolveOffset, heartbeat, isRunning, isStale }) =>
          eachBatch(
            {
              topic: batch.topic,
              partition: batch.partition,
              records: batch.messages.map((m) => toRecord(batch.topic, batch.partition, m)),
              highWatermark: batch.highWatermark,
            },
            { heartbeat, owned: () => isRunning() && !isStale(), handedOver: resolveOffset },
          ),
      });
    },
    commit: (offsets) => consumer.commitOffsets([...offsets]),
    pause: (where) => consumer.pause(topicPartitions(where)),
    resume: (where) => consumer.resume(topicPartitions(where)),
    seek: ({ topic, partition, offset }) => consumer.seek({ topic, partition, offset }),
    // Waits for the running eachBatch and leaves the group. It commits nothing: with autoCommit off,
    // kafkajs never commits the offsets resolveOffset() marked at hand-over
    // (test/ingest-apply-failure.e2e.test.ts stops the worker mid-failure and checks).
    stop: () => consumer.disconnect(),
  };
}
