import type { Logger } from 'pino';
import type { KafkaClient } from './client.ts';
import { checkTopicStates, createMissingTopics, topicStates } from './data-topics.ts';
import { checkTenantPartitions, tenantTopics, type WriterOwnership } from './writer-ownership.ts';

/** The part of the source's options (source.ts KafkaSourceOptions) the topic checks read. */
export interface TopicOptions {
  readonly topics: readonly string[];
  readonly refuseTruncatedTopics?: boolean;
  readonly ownership?: { readonly writer: WriterOwnership; readonly topicPrefix: string };
  readonly logger: Logger;
}

/**
 * Debezium creates a topic with the first event of its table; subscribing needs all of them to
 * exist. Missing ones are created compacted like Debezium's, and the data topics' settings are
 * checked (data-topics.ts).
 */
export async function prepareTopics(
  client: KafkaClient,
  options: TopicOptions,
  subscribed: readonly string[],
): Promise<void> {
  const owned = options.ownership;
  const missing = await createMissingTopics(
    client,
    subscribed,
    owned && { topics: tenantTopics(owned.topicPrefix), partitions: owned.writer.partitions },
  );
  if (missing.length > 0) options.logger.info({ topics: missing }, 'created missing data topics');
  checkTopicStates(
    await topicStates(client, options.topics),
    options.logger,
    options.refuseTruncatedTopics === true,
  );
  // After topicStates, whose retries wait out new partitions without their leader yet.
  if (owned) await checkTenantPartitions(client.admin, owned.writer, owned.topicPrefix);
}
