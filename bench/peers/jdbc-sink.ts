/**
 * The peer a platform team would deploy instead of ingest: Debezium's JDBC sink connector, in the
 * stack's Kafka Connect, consuming the ingest benchmark's pre-filled topics into PostgreSQL tables
 * (upserts keyed by the record key, deletes enabled, tables created by the sink). Used by
 * ingest/throughput.ts --jdbc-sink, in the same run as the ingest worker.
 *
 * Needs a Connect worker started with the plugin: `PDA_STACK_JDBC_SINK=1 bash dev-world/stack/stack.sh up`
 * (fetches io.debezium:debezium-connector-jdbc once, same version as the source connector).
 *
 * Done = the sink's consumer group (`connect-<connector>`) has committed the end offset of every
 * topic. Connect commits sink offsets every offset.flush.interval.ms (1 s in the stack), so the
 * elapsed time is exact to about a second; the rows written are counted afterwards as a check.
 */
import type { Admin } from 'kafkajs';
import { connectRest, converterSettings, readStackEnv, stackPgClient } from '../shared/stack-env.ts';

export interface JdbcSinkSettings {
  /** Records per JDBC batch (the sink's `batch.size`) and per consumer poll (`max.poll.records`). */
  readonly batchSize: number;
  /** Connect tasks; each takes a share of the topics' partitions. */
  readonly tasks: number;
  /** The topics' format (dev-world/stack/converters/<format>.json); default: the worker's JsonConverter. */
  readonly converters?: 'avro' | 'json';
}

export interface JdbcSinkResult {
  readonly connector: string;
  readonly settings: Record<string, string | number | boolean>;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** From the first committed progress on (the sink's start-up and table creation excluded). */
  readonly steadyEventsPerSecond: number | null;
  readonly rowsWritten: number;
}

const PLUGIN_CLASS = 'io.debezium.connector.jdbc.JdbcSinkConnector';

export async function jdbcSinkAvailable(): Promise<boolean> {
  const plugins = (await connectRest('/connector-plugins')) as { class: string }[];
  return plugins.some((p) => p.class === PLUGIN_CLASS);
}

async function committedTotal(admin: Admin, groupId: string, topics: string[]): Promise<number> {
  const offsets = await admin.fetchOffsets({ groupId, topics });
  let total = 0;
  for (const topic of offsets) for (const p of topic.partitions) total += Math.max(0, Number(p.offset));
  return total;
}

async function failedTrace(name: string): Promise<string | undefined> {
  const status = (await connectRest(`/connectors/${name}/status`)) as {
    connector: { state: string; trace?: string };
    tasks: { state: string; trace?: string }[];
  };
  if (status.connector.state === 'FAILED') return status.connector.trace ?? 'connector FAILED';
  const failed = status.tasks.find((t) => t.state === 'FAILED');
  return failed ? (failed.trace ?? 'task FAILED') : undefined;
}

/**
 * Runs the JDBC sink over `topics` (holding `events` records in all, one partition each) into a
 * fresh schema of the stack's PostgreSQL, waits until it has consumed everything, and cleans up.
 */
export async function measureJdbcSink(
  admin: Admin,
  prefix: string,
  topics: string[],
  events: number,
  settings: JdbcSinkSettings,
): Promise<JdbcSinkResult> {
  if (!(await jdbcSinkAvailable())) {
    throw new Error(
      'Kafka Connect does not list the JDBC sink plugin: restart the stack with PDA_STACK_JDBC_SINK=1 bash dev-world/stack/stack.sh up',
    );
  }
  const env = readStackEnv();
  const name = `${prefix}-jdbc-sink`;
  const schema = `${prefix}_jdbc_sink`;
  const client = stackPgClient();
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  const config = {
    'connector.class': PLUGIN_CLASS,
    'tasks.max': String(settings.tasks),
    topics: topics.join(','),
    // currentSchema: the sink creates and writes its tables there, not in the operational schema.
    // synchronous_commit=off: the durability ingest's SQLite files have (WAL, synchronous=NORMAL:
    // a crash may lose the last commits, never corrupts), so neither side pays an fsync per commit.
    'connection.url': `jdbc:postgresql://${env.PDA_PG_HOST}:${env.PDA_PG_PORT}/${env.PDA_PG_DATABASE}?currentSchema=${schema}&options=-c%20synchronous_commit%3Doff`,
    'connection.username': env.PDA_PG_USER ?? '',
    'connection.password': env.PDA_PG_PASSWORD ?? '',
    'insert.mode': 'upsert',
    'delete.enabled': 'true',
    'primary.key.mode': 'record_key',
    'schema.evolution': 'basic',
    'batch.size': String(settings.batchSize),
    // A poll hands put() at most max.poll.records: without this the sink's batches stay at 500.
    'consumer.override.max.poll.records': String(settings.batchSize),
    'consumer.override.auto.offset.reset': 'earliest',
    'errors.tolerance': 'none',
    ...(settings.converters ? converterSettings(settings.converters) : {}),
  };
  const groupId = `connect-${name}`;
  const start = performance.now();
  await connectRest(`/connectors/${name}/config`, { method: 'PUT', body: JSON.stringify(config) });
  let firstProgress: { at: number; done: number } | undefined;
  let done = 0;
  try {
    while (done < events) {
      await new Promise((r) => setTimeout(r, 250));
      const trace = await failedTrace(name);
      if (trace) throw new Error(`JDBC sink failed: ${trace.slice(0, 2000)}`);
      done = await committedTotal(admin, groupId, topics);
      if (!firstProgress && done > 0) firstProgress = { at: performance.now(), done };
    }
    const end = performance.now();
    let rowsWritten = 0;
    const tables = await client.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
      [schema],
    );
    for (const { table_name } of tables.rows) {
      const count = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}."${table_name}"`);
      rowsWritten += Number(count.rows[0]?.n ?? 0);
    }
    const seconds = (end - start) / 1000;
    return {
      connector: `${PLUGIN_CLASS} (Debezium ${await pluginVersion()})`,
      settings: { ...config, 'connection.password': '(stack)', topics: `${topics.length} topics` },
      events: done,
      seconds: Math.round(seconds * 100) / 100,
      eventsPerSecond: Math.round(done / seconds),
      steadyEventsPerSecond: firstProgress
        ? Math.round((done - firstProgress.done) / ((end - firstProgress.at) / 1000))
        : null,
      rowsWritten,
    };
  } finally {
    await connectRest(`/connectors/${name}`, { method: 'DELETE' }).catch(() => {});
    await admin.deleteGroups([groupId]).catch(() => {});
    await client.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
    await client.end();
  }
}

async function pluginVersion(): Promise<string> {
  const plugins = (await connectRest('/connector-plugins')) as { class: string; version: string }[];
  return plugins.find((p) => p.class === PLUGIN_CLASS)?.version ?? 'unknown';
}
