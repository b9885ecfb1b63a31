// A private source with company-keyed partitions (PDA_DATA_PARTITIONS, dev-world/stack/README.md,
// "Partitioned topics") on the running stack: a database provisioned as `stack.sh database create`
// does with N partitions (schema, publication, dev-world/db/partitioned-identity.sql) and a connector on
// it with the partitioned overlay, its own slot and topic prefix. `remove` takes everything away
// again: connector and offsets, topics, the registry's subjects of those topics, the database and
// its slot.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { TABLE_NAMES } from '@pda/schemas/registry';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { shippedConnectorConfig } from './avro-records.ts';
import { connectRequest, repoRoot, stackEnv, waitFor } from './stack-env.ts';

export interface PartitionedSource {
  readonly database: string;
  readonly topicPrefix: string;
  readonly heartbeatTopic: string;
  readonly connectorName: string;
  /** A pool on the private database. */
  readonly pool: pg.Pool;
  /** Registers the connector (snapshot of what is in the database, then streaming); waits until RUNNING. */
  startConnector(): Promise<void>;
  remove(kafka: Kafka): Promise<void>;
}

function stack(partitions: number, ...args: string[]): void {
  execFileSync('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), ...args], {
    env: { ...process.env, PDA_DATA_PARTITIONS: String(partitions) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

async function connectorState(name: string) {
  return (await connectRequest(`/connectors/${name}/status`)) as {
    connector: { state: string };
    tasks: Array<{ state: string; trace?: string }>;
  };
}

export function createPartitionedSource(label: string, partitions: number): PartitionedSource {
  const suffix = randomBytes(4).toString('hex');
  const database = `pda_e2e_${label}_${suffix}`;
  const connectorName = `pda-${label}-${suffix}`;
  const slotName = `pda_${label}_${suffix}`;
  const topicPrefix = `pda${label}${suffix}`;
  const heartbeatTopic = `__debezium-heartbeat.${topicPrefix}`;
  stack(partitions, 'database', 'create', database);
  const pool = new pg.Pool({ ...stackEnv().pg, database, max: 4 });
  let connectorStarted = false;

  return {
    database,
    topicPrefix,
    heartbeatTopic,
    connectorName,
    pool,
    async startConnector() {
      const config = shippedConnectorConfig(
        {
          'topic.prefix': topicPrefix,
          'slot.name': slotName,
          'database.dbname': database,
          'table.include.list': TABLE_NAMES.map((table) => `public.${table}`).join(','),
        },
        { partitions },
      );
      await connectRequest(`/connectors/${connectorName}/config`, {
        method: 'PUT',
        body: JSON.stringify(config),
      });
      connectorStarted = true;
      await waitFor(
        `${connectorName} RUNNING`,
        async () => {
          const status = await connectorState(connectorName);
          const task = status.tasks[0];
          if (task?.state === 'FAILED')
            throw new Error(`${connectorName} FAILED: ${task.trace?.slice(0, 800)}`);
          return status.connector.state === 'RUNNING' && task?.state === 'RUNNING';
        },
        { timeoutMs: 60_000 },
      );
    },
    async remove(kafka) {
      if (connectorStarted) {
        // The slot is in the private database: `database drop` drops it with the database.
        await connectRequest(`/connectors/${connectorName}/stop`, { method: 'PUT' }).catch(() => {});
        await waitFor(
          `${connectorName} stopped`,
          async () => (await connectorState(connectorName)).connector.state === 'STOPPED',
        ).catch(() => {});
        await connectRequest(`/connectors/${connectorName}/offsets`, { method: 'DELETE' }).catch(() => {});
        await connectRequest(`/connectors/${connectorName}`, { method: 'DELETE' }).catch(() => {});
      }
      const admin = kafka.admin();
      await admin.connect();
      try {
        const topics = (await admin.listTopics()).filter(
          (t) => t.startsWith(`${topicPrefix}.`) || t === heartbeatTopic,
        );
        if (topics.length > 0) await admin.deleteTopics({ topics });
      } finally {
        await admin.disconnect();
      }
      // The private topics' key and value schemas, so that runs do not pile up in the registry.
      const registry = stackEnv().schemaRegistryUrl;
      const subjects = (await (await fetch(`${registry}/subjects`)).json()) as string[];
      for (const subject of subjects.filter((name) => name.startsWith(`${topicPrefix}.`))) {
        const at = `${registry}/subjects/${encodeURIComponent(subject)}`;
        await fetch(at, { method: 'DELETE' });
        await fetch(`${at}?permanent=true`, { method: 'DELETE' });
      }
      await pool.end();
      stack(partitions, 'database', 'drop', database);
    },
  };
}
