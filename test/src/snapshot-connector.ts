// A short-lived second Debezium connector that snapshots a few chosen rows, so tests and fixtures
// get real `r` (snapshot read) events for rows that existed before that connector started — the
// stack's own connector snapshotted an empty database long ago.
import { randomBytes } from 'node:crypto';
import { shippedConnectorConfig } from './avro-records.ts';
import { connectRequest, debeziumClient, waitFor } from './stack-env.ts';

export interface SnapshotConnectorOptions {
  /** Topic prefix: the stack's own (`pda`) to land in the real topics, or a private one. */
  topicPrefix: string;
  /** Table name (schema public) → SELECT returning the rows to snapshot. */
  selects: Record<string, string>;
  /** Settings over connector.json's (another converter: test/src/avro-records.ts). */
  overrides?: Record<string, string>;
}

export interface SnapshotConnector {
  name: string;
  slotName: string;
  /** Stops the connector, deletes its offsets and itself, then drops its replication slot. */
  remove(): Promise<void>;
}

export async function startSnapshotConnector(options: SnapshotConnectorOptions): Promise<SnapshotConnector> {
  const suffix = randomBytes(4).toString('hex');
  const name = `pda-snapshot-${suffix}`;
  const slotName = `pda_snapshot_${suffix}`;
  const tables = Object.keys(options.selects).map((table) => `public.${table}`);
  const config: Record<string, string> = shippedConnectorConfig({
    'topic.prefix': options.topicPrefix,
    'slot.name': slotName,
    'snapshot.mode': 'initial_only',
    'table.include.list': tables.join(','),
    'snapshot.select.statement.overrides': tables.join(','),
    'heartbeat.interval.ms': '0',
    // Debezium names its JMX beans after topic.prefix; with the stack's own prefix the second
    // connector would wait ~60 s for the first one's bean name. A tag makes the name unique.
    'custom.metric.tags': `snapshot=${suffix}`,
    ...options.overrides,
  });
  for (const [table, select] of Object.entries(options.selects)) {
    config[`snapshot.select.statement.overrides.public.${table}`] = select;
  }
  await connectRequest(`/connectors/${name}/config`, { method: 'PUT', body: JSON.stringify(config) });
  return { name, slotName, remove: () => removeConnector(name, slotName) };
}

/** Stops a test connector, deletes its offsets and itself, then drops its replication slot. */
export async function removeConnector(name: string, slotName: string): Promise<void> {
  // STOPPED (KIP-875) lets the worker delete the connector's source offsets before it goes.
  await connectRequest(`/connectors/${name}/stop`, { method: 'PUT' });
  await waitFor(`${name} stopped`, async () => {
    const status = (await connectRequest(`/connectors/${name}/status`)) as { connector: { state: string } };
    return status.connector.state === 'STOPPED';
  });
  await connectRequest(`/connectors/${name}/offsets`, { method: 'DELETE' });
  await connectRequest(`/connectors/${name}`, { method: 'DELETE' });
  await dropSlot(slotName);
}

/** Drops a test replication slot once its walsender has let go (needs the REPLICATION role). */
export async function dropSlot(slotName: string): Promise<void> {
  const client = debeziumClient();
  await client.connect();
  try {
    await waitFor(`slot ${slotName} released`, async () => {
      const { rows } = await client.query<{ active: boolean }>(
        'SELECT active FROM pg_replication_slots WHERE slot_name = $1',
        [slotName],
      );
      if (rows.length === 0) return true;
      if (rows[0]!.active) return false;
      await client.query('SELECT pg_drop_replication_slot($1)', [slotName]);
      return true;
    });
  } finally {
    await client.end();
  }
}
