/**
 * The source side of the pipeline benchmark: a second database in the stack's PostgreSQL
 * (`stack.sh database create`), seeded with the dev world's seed generator, and private Debezium connectors on it —
 * the stack's running connector configuration with another database, slot, topic prefix and, when
 * asked, another converter — so a run never touches the stack's own topics or slot.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type SeedCounts, seedDatabase } from '@pda/dev-world/seed';
import type { Admin } from 'kafkajs';
import { repoRoot } from '../../shared/paths.ts';
import { connectRest, converterSettings, readStackEnv, stackPgClient } from '../../shared/stack-env.ts';

export type ConnectorFormat = 'avro' | 'json';

function stackScript(...args: string[]): void {
  execFileSync('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export function createBenchDatabase(name: string): void {
  stackScript('database', 'create', name);
}

export function dropBenchDatabase(name: string): void {
  stackScript('database', 'drop', name);
}

/** Seeds `counts` into `database` in one transaction (the dev world's seed); returns the rows and the seconds. */
export async function seedBenchDatabase(database: string, counts: SeedCounts, seed: string) {
  const client = stackPgClient(database);
  await client.connect();
  const backend = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  try {
    return await seedDatabase(client, { seed, counts });
  } finally {
    await client.end();
    // Its CPU reaches the postmaster's reaped-children time when it exits: wait for that, so the
    // seed's work is not counted in the stage measured next (shared/process-cpu.ts).
    for (let i = 0; backend !== undefined && existsSync(`/proc/${backend}`) && i < 100; i++) await sleep(20);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The stack's connector as it runs (table list included), its converters replaced by `format`'s. */
async function stackConnectorConfig(format: ConnectorFormat): Promise<Record<string, string>> {
  const name = readStackEnv().PDA_CONNECTOR_NAME ?? 'pda-postgres';
  const running = (await connectRest(`/connectors/${name}/config`)) as Record<string, string>;
  const config: Record<string, string> = {};
  for (const [key, value] of Object.entries(running)) {
    if (key === 'name' || key.startsWith('key.converter') || key.startsWith('value.converter')) continue;
    config[key] = value;
  }
  return { ...config, ...converterSettings(format) };
}

export interface BenchConnector {
  readonly name: string;
  readonly topicPrefix: string;
  remove(): Promise<void>;
}

export interface BenchConnectorOptions {
  readonly name: string;
  readonly database: string;
  readonly format: ConnectorFormat;
  /** `no_data`: stream what is written after it starts; `initial_only`: snapshot what is there. */
  readonly snapshotMode: 'no_data' | 'initial_only';
  /** Settings over the stack's (the tuning being measured). */
  readonly overrides?: Readonly<Record<string, string>>;
}

/** Registers a private connector on `database`; resolves once its task runs. */
export async function startBenchConnector(options: BenchConnectorOptions): Promise<BenchConnector> {
  const { name } = options;
  const slotName = name.replaceAll('-', '_');
  const topicPrefix = name.replaceAll('-', '');
  const config = {
    ...(await stackConnectorConfig(options.format)),
    'database.dbname': options.database,
    'slot.name': slotName,
    'topic.prefix': topicPrefix,
    'snapshot.mode': options.snapshotMode,
    // Debezium names its JMX beans after the prefix and server: a tag keeps them apart from the stack's.
    'custom.metric.tags': `bench=${name}`,
    ...options.overrides,
  };
  await connectRest(`/connectors/${name}/config`, { method: 'PUT', body: JSON.stringify(config) });
  const deadline = Date.now() + 120_000;
  for (;;) {
    // Connect answers 404 for a moment after the PUT, until the worker has written the status.
    const status = (await connectRest(`/connectors/${name}/status`).catch(() => undefined)) as
      | { connector: { state: string }; tasks: Array<{ state: string; trace?: string }> }
      | undefined;
    if (!status) {
      if (Date.now() > deadline) throw new Error(`${name}: no status after 120 s`);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const task = status.tasks[0];
    if (task?.state === 'FAILED') throw new Error(`${name} FAILED: ${task.trace?.slice(0, 800)}`);
    if (status.connector.state === 'RUNNING' && task?.state === 'RUNNING') break;
    if (Date.now() > deadline) throw new Error(`${name} not RUNNING after 120 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    name,
    topicPrefix,
    // The slot goes with the database (stack.sh database drop); the connector and its offsets here.
    async remove() {
      await connectRest(`/connectors/${name}/stop`, { method: 'PUT' }).catch(() => {});
      await connectRest(`/connectors/${name}`, { method: 'DELETE' }).catch(() => {});
    },
  };
}

/**
 * The run writes gigabytes of WAL in its own database. The stack's slot keeps WAL until its
 * connector confirms a position, which it does on changes in the stack's database: past
 * max_slot_wal_keep_size (2 GB in dev-world/stack) PostgreSQL invalidates the slot, and the stack's
 * connector cannot stream again until `stack.sh down` and `up` (a new slot, a new snapshot).
 */
export async function warnIfStackSlotLost(): Promise<void> {
  const env = readStackEnv();
  const client = stackPgClient();
  await client.connect();
  try {
    const { rows } = await client.query<{ wal_status: string }>(
      'SELECT wal_status FROM pg_replication_slots WHERE slot_name = $1',
      [env.PDA_SLOT_NAME ?? 'pda_slot'],
    );
    const status = rows[0]?.wal_status;
    if (status === 'lost' || status === 'unreserved') {
      process.stderr.write(
        `pipeline: WARNING the stack's replication slot is ${status} (the run's WAL passed max_slot_wal_keep_size): run bash dev-world/stack/stack.sh down, then up\n`,
      );
    }
  } finally {
    await client.end();
  }
}

/** The data topics under `prefix` (`<prefix>.public.<table>`) that exist now. */
export async function dataTopics(admin: Admin, prefix: string): Promise<string[]> {
  return (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.public.`));
}

/** Records written to the data topics under `prefix`: the sum of their end offsets. */
export async function eventsInTopics(admin: Admin, prefix: string): Promise<number> {
  let total = 0;
  for (const topic of await dataTopics(admin, prefix)) {
    for (const p of await admin.fetchTopicOffsets(topic)) total += Number(p.high);
  }
  return total;
}

/** Every topic under `prefix` (data and heartbeat). */
export async function deletePrefixTopics(admin: Admin, prefix: string): Promise<void> {
  const topics = (await admin.listTopics()).filter(
    (t) => t.startsWith(`${prefix}.`) || t.endsWith(`.${prefix}`),
  );
  if (topics.length > 0) await admin.deleteTopics({ topics });
}

export type { SeedCounts };
