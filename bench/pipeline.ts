/**
 * The whole pipeline, stage by stage, in ONE run (NOT a test): PostgreSQL's logical decoding →
 * Debezium in Kafka Connect → Kafka → ingest, and Debezium's JDBC sink as the peer.
 *
 *   PDA_STACK_JDBC_SINK=1 bash ops/stack/stack.sh up
 *   pnpm --filter @pda/bench exec node pipeline.ts [--rows 200000] [--shapes one,many] [--formats avro,json]
 *        [--connector key=value ...] [--ingest INGEST_X=value ...] [--no-jdbc-sink]
 *
 * For each size, shape (one company of rows/2 sites with one contact each, or 100 companies
 * sharing them) and connector format, on a second database of the stack's PostgreSQL (stack.sh
 * database create; the stack's own connector is stopped for the run so its walsender decodes
 * nothing of it):
 *   whole      a connector (streaming, snapshot.mode=no_data) and an ingest worker run; the rows are
 *              seeded in one transaction; seed end → every event applied (and, same run, → every
 *              event in Kafka);
 *   snapshot   a new connector (snapshot.mode=initial_only) on the now-filled database: registration
 *              → every row in Kafka, nothing consuming;
 *   streaming  a new streaming connector, the same rows seeded again: seed end → every event in
 *              Kafka, nothing consuming;
 *   ingest     a fresh ingest worker (new group, empty data directory) on the streaming topics:
 *              start → every event applied;
 *   jdbc-sink  Debezium's JDBC sink on the same topics into PostgreSQL (upserts), the peer.
 * Each stage reports its seconds, events/s and the CPU seconds of every process (PostgreSQL with
 * its children, Kafka, Connect, the registry, this process = ingest) over its interval, so its
 * share of the two cores shows. One JSON document on stdout, a Markdown summary on stderr.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAvscTypes } from '@pda/ingest';
import { Kafka, logLevel } from 'kafkajs';
import { benchWorker } from './ingest-worker.ts';
import { jdbcSinkAvailable, measureJdbcSink } from './jdbc-sink-peer.ts';
import { renderPipelineReport } from './pipeline-report.ts';
import {
  type BenchConnector,
  type BenchConnectorOptions,
  type ConnectorFormat,
  createBenchDatabase,
  dataTopics,
  deletePrefixTopics,
  dropBenchDatabase,
  eventsInTopics,
  type SeedCounts,
  seedBenchDatabase,
  startBenchConnector,
  stopStackConnector,
} from './pipeline-source.ts';
import { type CpuSample, cpuBetween, sampleCpu } from './process-cpu.ts';
import { kafkaBrokers, readStackEnv } from './stack-env.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    rows: { type: 'string', default: '200000' },
    shapes: { type: 'string', default: 'one,many' },
    formats: { type: 'string', default: 'avro,json' },
    connector: { type: 'string', multiple: true, default: [] },
    ingest: { type: 'string', multiple: true, default: [] },
    'no-jdbc-sink': { type: 'boolean', default: false },
    'many-companies': { type: 'string', default: '100' },
  },
});

const log = (line: string) => process.stderr.write(`pipeline: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function keyValues(list: readonly string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at < 1) throw new Error(`--${flag} ${JSON.stringify(item)}: expected key=value`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

const CONNECTOR_OVERRIDES = keyValues(args.connector, 'connector');
const INGEST_ENV = keyValues(args.ingest, 'ingest');
const SHAPES = args.shapes.split(',') as ('one' | 'many')[];
const FORMATS = args.formats.split(',') as ConnectorFormat[];
const SIZES = args.rows.split(',').map(Number);
for (const shape of SHAPES) if (shape !== 'one' && shape !== 'many') throw new Error(`--shapes: ${shape}?`);
for (const format of FORMATS)
  if (format !== 'avro' && format !== 'json') throw new Error(`--formats: ${format}?`);
for (const size of SIZES) if (!Number.isInteger(size) || size < 1000) throw new Error(`--rows: ${size}?`);

/** rows ≈ companies · (1 + 2 · sites): each site with one contact. */
function countsFor(rows: number, shape: 'one' | 'many'): SeedCounts {
  const companies = shape === 'one' ? 1 : Number(args['many-companies']);
  return {
    companies,
    sites: Math.max(1, Math.round(rows / 2 / companies)),
    contactsPerSite: 1,
    services: 0,
    categories: 0,
    equipment: 0,
    consumables: 0,
  };
}

export interface StageResult {
  readonly stage: string;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  /** From the first event on (start-up excluded), where it applies. */
  readonly steadyEventsPerSecond?: number | undefined;
  readonly cpuSeconds: CpuSample;
  /** Summed CPU of every process ÷ (2 cores · seconds): 1 = both cores busy the whole time. */
  readonly coresBusy: number;
  readonly note?: string | undefined;
}

function stage(
  name: string,
  events: number,
  seconds: number,
  cpu: CpuSample,
  extra: Partial<StageResult> = {},
): StageResult {
  const summed = Object.values(cpu).reduce((a, b) => a + b, 0);
  const result: StageResult = {
    stage: name,
    events,
    seconds: Math.round(seconds * 100) / 100,
    eventsPerSecond: Math.round(events / seconds),
    cpuSeconds: cpu,
    coresBusy: Math.round((summed / (cpus().length * seconds)) * 100) / 100,
    ...extra,
  };
  log(
    `${name}: ${events} events in ${result.seconds} s (${result.eventsPerSecond}/s), cpu ${JSON.stringify(cpu)}`,
  );
  return result;
}

/** Polls `progress` until it reaches `target`; the moment it did (performance.now()) and the first progress. */
async function waitFor(
  label: string,
  target: number,
  progress: () => Promise<number>,
  timeoutMs: number,
): Promise<{ at: number; first: { at: number; done: number } | undefined }> {
  const deadline = performance.now() + timeoutMs;
  let first: { at: number; done: number } | undefined;
  for (;;) {
    const done = await progress();
    const now = performance.now();
    if (!first && done > 0) first = { at: now, done };
    if (done >= target) return { at: now, first };
    if (now > deadline) throw new Error(`${label}: ${done} of ${target} after ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

async function runVariant(rows: number, shape: 'one' | 'many', format: ConnectorFormat) {
  const stackDir = readStackEnv().PDA_STACK_DIR ?? join(import.meta.dirname, '../.stack');
  const id = `${Date.now().toString(36)}${shape[0]}${format[0]}`;
  const database = `pda_bench_${id}`;
  const counts = countsFor(rows, shape);
  const timeoutMs = Math.max(600_000, rows * 20);
  const kafka = new Kafka({ clientId: 'bench-pipeline', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const avscTypes = await loadAvscTypes();
  const prefixes: string[] = [];
  const connectors: BenchConnector[] = [];
  const start = async (options: Omit<BenchConnectorOptions, 'database' | 'format' | 'overrides'>) => {
    const connector = await startBenchConnector({
      ...options,
      database,
      format,
      overrides: CONNECTOR_OVERRIDES,
    });
    connectors.push(connector);
    prefixes.push(connector.topicPrefix);
    return connector;
  };
  const dirs: string[] = [];
  const stages: StageResult[] = [];
  let seedSeconds = 0;
  createBenchDatabase(database);
  try {
    // ---- whole: connector + ingest running, seed, seed end → all applied ----
    const whole = await start({ name: `bench-${id}-whole`, snapshotMode: 'no_data' });
    const wholeDir = mkdtempSync(join(tmpdir(), 'bench-pipeline-'));
    dirs.push(wholeDir);
    const live = benchWorker({
      groupId: `${whole.topicPrefix}-ingest`,
      topicPrefix: whole.topicPrefix,
      dataDir: wholeDir,
      avscTypes,
      env: INGEST_ENV,
    });
    const liveRun = live.worker.run();
    const handled = async (metrics: typeof live.metrics) =>
      (await metrics.events.get()).values.reduce((sum, v) => sum + v.value, 0);
    log(`${rows} rows, ${shape}, ${format}: seeding ${JSON.stringify(counts)}`);
    const seeded = await seedBenchDatabase(database, counts, `pipeline-${id}`);
    seedSeconds = seeded.seconds;
    const events = seeded.rows;
    const wholeStart = performance.now();
    const cpu0 = sampleCpu(stackDir);
    let inKafkaAt: number | undefined;
    const wholeDone = await waitFor(
      'whole pipeline',
      events,
      async () => {
        if (inKafkaAt === undefined && (await eventsInTopics(admin, whole.topicPrefix)) >= events) {
          inKafkaAt = performance.now();
        }
        return handled(live.metrics);
      },
      timeoutMs,
    );
    const cpu1 = sampleCpu(stackDir);
    live.worker.stop();
    await liveRun;
    await whole.remove();
    stages.push(
      stage('whole', events, (wholeDone.at - wholeStart) / 1000, cpuBetween(cpu0, cpu1), {
        note:
          inKafkaAt === undefined
            ? undefined
            : `every event in Kafka ${((inKafkaAt - wholeStart) / 1000).toFixed(2)} s after the seed's commit`,
      }),
    );

    // ---- snapshot: a new connector on the filled database, nothing consuming ----
    const snapStart = performance.now();
    const snapCpu0 = sampleCpu(stackDir);
    const snap = await start({ name: `bench-${id}-snap`, snapshotMode: 'initial_only' });
    const snapDone = await waitFor(
      'snapshot',
      events,
      () => eventsInTopics(admin, snap.topicPrefix),
      timeoutMs,
    );
    const snapCpu1 = sampleCpu(stackDir);
    await snap.remove();
    stages.push(
      stage('snapshot', events, (snapDone.at - snapStart) / 1000, cpuBetween(snapCpu0, snapCpu1), {
        note: 'from the registration of the connector',
      }),
    );

    // ---- streaming source alone: a new connector, the rows again, nothing consuming ----
    const stream = await start({ name: `bench-${id}-stream`, snapshotMode: 'no_data' });
    const again = await seedBenchDatabase(database, counts, `pipeline-${id}-again`);
    const streamStart = performance.now();
    const streamCpu0 = sampleCpu(stackDir);
    const streamDone = await waitFor(
      'streaming source',
      again.rows,
      () => eventsInTopics(admin, stream.topicPrefix),
      timeoutMs,
    );
    const streamCpu1 = sampleCpu(stackDir);
    await stream.remove();
    stages.push(
      stage(
        'streaming',
        again.rows,
        (streamDone.at - streamStart) / 1000,
        cpuBetween(streamCpu0, streamCpu1),
      ),
    );

    // ---- ingest alone on the streaming topics ----
    const aloneDir = mkdtempSync(join(tmpdir(), 'bench-pipeline-'));
    dirs.push(aloneDir);
    const alone = benchWorker({
      groupId: `${stream.topicPrefix}-alone`,
      topicPrefix: stream.topicPrefix,
      dataDir: aloneDir,
      avscTypes,
      env: INGEST_ENV,
    });
    const aloneCpu0 = sampleCpu(stackDir);
    const aloneStart = performance.now();
    const aloneRun = alone.worker.run();
    const aloneDone = await waitFor('ingest alone', again.rows, () => handled(alone.metrics), timeoutMs);
    const aloneCpu1 = sampleCpu(stackDir);
    alone.worker.stop();
    await aloneRun;
    const steady = aloneDone.first
      ? Math.round((again.rows - aloneDone.first.done) / ((aloneDone.at - aloneDone.first.at) / 1000))
      : undefined;
    stages.push(
      stage('ingest', again.rows, (aloneDone.at - aloneStart) / 1000, cpuBetween(aloneCpu0, aloneCpu1), {
        steadyEventsPerSecond: steady,
        note: 'from the worker start (apply thread, group join, first fetch included)',
      }),
    );

    // ---- the peer: Debezium's JDBC sink on the same topics ----
    if (!args['no-jdbc-sink'] && (await jdbcSinkAvailable())) {
      const topics = await dataTopics(admin, stream.topicPrefix);
      const sinkCpu0 = sampleCpu(stackDir);
      const sink = await measureJdbcSink(admin, stream.topicPrefix, topics, again.rows, {
        batchSize: 2000,
        tasks: 1,
        converters: format,
      });
      const sinkCpu1 = sampleCpu(stackDir);
      stages.push(
        stage('jdbc-sink', again.rows, sink.seconds, cpuBetween(sinkCpu0, sinkCpu1), {
          steadyEventsPerSecond: sink.steadyEventsPerSecond ?? undefined,
          note: `${sink.connector}, batch.size 2000, 1 task, ${sink.rowsWritten} rows written`,
        }),
      );
    } else {
      log(
        'jdbc-sink: skipped (--no-jdbc-sink, or no plugin: PDA_STACK_JDBC_SINK=1 bash ops/stack/stack.sh up)',
      );
    }
  } catch (error) {
    log(`${rows} rows, ${shape}, ${format} failed: ${error instanceof Error ? error.stack : String(error)}`);
    throw error;
  } finally {
    for (const connector of connectors) await connector.remove();
    for (const prefix of prefixes) await deletePrefixTopics(admin, prefix).catch(() => {});
    await admin.disconnect();
    dropBenchDatabase(database);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  return { rows, shape, format, counts, seedSeconds: Math.round(seedSeconds * 100) / 100, stages };
}

async function main() {
  const loadAtStart = loadavg()[0] ?? 0;
  const restartStackConnector = await stopStackConnector();
  const variants = [];
  try {
    for (const rows of SIZES)
      for (const shape of SHAPES)
        for (const format of FORMATS) variants.push(await runVariant(rows, shape, format));
  } finally {
    await restartStackConnector();
  }
  const report = {
    benchmark: 'pipeline',
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg()[0] ?? 0,
    },
    settings: { connector: CONNECTOR_OVERRIDES, ingest: INGEST_ENV },
    variants,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  process.stderr.write(`\n${renderPipelineReport(report)}\n`);
}

await main();
