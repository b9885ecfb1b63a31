// A second Debezium connector streaming from the stack's PostgreSQL into topics of its own
// (`<topicPrefix>.public.<table>`), with its own replication slot, so a test can change topic
// settings and wait for the log cleaner without touching the shared `pda.*` topics or connector.
import { randomBytes } from 'node:crypto';
import { TABLE_NAMES } from '@pda/schemas/registry';
import type { Kafka } from 'kafkajs';
import { shippedConnectorConfig } from './avro-records.ts';
import { removeConnector } from './snapshot-connector.ts';
import { connectRequest, waitFor } from './stack-env.ts';

export interface PrivateConnector {
  readonly name: string;
  readonly topicPrefix: string;
  /** Removes the connector, its offsets and slot, then every topic under its prefix. */
  remove(kafka: Kafka): Promise<void>;
}

/**
 * Registers dev-world/stack/connector.json (Avro through the registry unless `overrides` name another
 * converter) with a private prefix and slot, every registry table (the file
 * has no table.include.list: stack.sh adds it, like here), plus `overrides`; waits until RUNNING.
 * `partitions` > 1: the company-keyed partitions' settings too (dev-world/stack/connector-partitioned.json).
 */
export async function startPrivateConnector(
  label: string,
  overrides: Record<string, string>,
  { partitions = 1 }: { partitions?: number } = {},
): Promise<PrivateConnector> {
  const suffix = randomBytes(4).toString('hex');
  const name = `pda-${label}-${suffix}`;
  const slotName = `pda_${label}_${suffix}`;
  const topicPrefix = `pda${label}${suffix}`;
  const config = shippedConnectorConfig(
    {
      'topic.prefix': topicPrefix,
      'slot.name': slotName,
      'table.include.list': TABLE_NAMES.map((table) => `public.${table}`).join(','),
      ...overrides,
    },
    { partitions },
  );
  await connectRequest(`/connectors/${name}/config`, { method: 'PUT', body: JSON.stringify(config) });
  await waitFor(
    `${name} RUNNING`,
    async () => {
      const status = (await connectRequest(`/connectors/${name}/status`)) as {
        connector: { state: string };
        tasks: Array<{ state: string; trace?: string }>;
      };
      const task = status.tasks[0];
      if (task?.state === 'FAILED') throw new Error(`${name} FAILED: ${task.trace?.slice(0, 500)}`);
      return status.connector.state === 'RUNNING' && task?.state === 'RUNNING';
    },
    { timeoutMs: 60_000 },
  );
  return {
    name,
    topicPrefix,
    async remove(kafka) {
      await removeConnector(name, slotName);
      const admin = kafka.admin();
      await admin.connect();
      try {
        const topics = (await admin.listTopics()).filter((t) => t.startsWith(`${topicPrefix}.`));
        if (topics.length > 0) await admin.deleteTopics({ topics });
      } finally {
        await admin.disconnect();
      }
    },
  };
}
