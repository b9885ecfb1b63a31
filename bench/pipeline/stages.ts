/**
 * The whole pipeline, stage by stage, in ONE run (NOT a test): PostgreSQL's logical decoding →
 * Debezium in Kafka Connect → Kafka → ingest, and Debezium's JDBC sink as the peer.
 *
 *   PDA_STACK_JDBC_SINK=1 bash dev-world/stack/stack.sh up
 *   pnpm --filter @pda/bench exec node pipeline/stages.ts [--rows 200000] [--shapes one,many] [--formats avro,json]
 *        [--stages whole,snapshot,streaming,ingest,rebuild,jdbc-sink] [--connector key=value ...] [--ingest INGEST_X=value ...]
 *
 * For each size, shape (one company of rows/2 sites with one contact each, or 100 companies
 * sharing them) and connector format, on a second database of the stack's PostgreSQL (stack.sh
 * database create), so the run's rows never reach the stack's topics:
 *   whole      a connector (streaming, snapshot.mode=no_data) and an ingest worker run; the rows are
 *              seeded in one transaction; seed end → every event applied (and, same run, → every
 *              event in Kafka);
 *   snapshot   a new connector (snapshot.mode=initial_only) on the now-filled database: registration
 *              → every row in Kafka, nothing consuming;
 *   streaming  a new streaming connector, the same rows seeded again: seed end → every event in
 *              Kafka, nothing consuming;
 *   ingest     a fresh ingest worker (new group, empty data directory) on the streaming topics:
 *              start → every event applied;
 *   rebuild    `rebuild` of that worker's directory (a new generation, swapped in) while a reader
 *              polls one company through the data-directory link: rate, peak RSS, progress lines;
 *   jdbc-sink  Debezium's JDBC sink on the same topics into PostgreSQL (upserts), the peer.
 * Each stage reports its seconds, events/s and the CPU seconds of every process (PostgreSQL with
 * its children, Kafka, Connect, the registry, this process = ingest) over its interval, so its
 * share of the two cores shows. One JSON document on stdout, a Markdown summary on stderr.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type AvscTypes, loadAvscTypes, parseConfig, rebuild } from '@pda/ingest';
import { openCompanyReader } from '@pda/projections/read';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import pino from 'pino';
import { jdbcSinkAvailable, measureJdbcSink } from '../peers/jdbc-sink.ts';
import { type BenchWorkerMetrics, benchWorker, benchWorkerEnv } from '../shared/ingest-worker.ts';
import { repoRoot } from '../shared/paths.ts';
import { type CpuSample, cpuBetween, sampleCpu } from '../shared/process-cpu.ts';
import { kafkaBrokers, readStackEnv } from '../shared/stack-env.ts';
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
  warnIfStackSlotLost,
} from './parts/source.ts';
import { renderPipelineReport } from './report.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    rows: { type: 'string', default: '200000' },
    shapes: { type: 'string', default: 'one,many' },
    formats: { type: 'string', default: 'avro,json' },
    connector: { type: 'string', multiple: true, default: [] },
    ingest: { type: 'string', multiple: true, default: [] },
    stages: { type: 'string', default: 'whole,snapshot,streaming,ingest,rebuild,jdbc-sink' },
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
const STAGES = new Set(args.stages.split(','));
for (const name of STAGES) {
  if (!['whole', 'snapshot', 'streaming', 'ingest', 'rebuild', 'jdbc-sink'].includes(name))
    throw new Error(`--stages: ${name}?`);
}
const round2 = (n: number) => Math.round(n * 100) / 100;
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

/** One second of the whole stage: events in Kafka, events applied, cores each process used. */
export interface TimelinePoint {
  readonly s: number;
  readonly inKafka: number;
  readonly applied: number;
  readonly cores: CpuSample;
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
  readonly timeline?: readonly TimelinePoint[];
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
    seconds: round2(seconds),
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

/** What every stage of one variant shares: its database, topics, directories and clients. */
interface VariantRun {
  readonly id: string;
  readonly database: string;
  readonly counts: SeedCounts;
  readonly stackDir: string;
  readonly timeoutMs: number;
  readonly admin: Admin;
  readonly avscTypes: AvscTypes;
  readonly dirs: string[];
  startConnector(name: string, snapshotMode: BenchConnectorOptions['snapshotMode']): Promise<BenchConnector>;
}

const handled = async (metrics: BenchWorkerMetrics) =>
  (await metrics.events.get()).values.reduce((sum, v) => sum + v.value, 0);

/** Events per apply call (one company transaction group): how batched ingest's writes were. */
async function eventsPerApply(metrics: BenchWorkerMetrics, events: number): Promise<string> {
  const calls =
    (await metrics.batchDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  return calls > 0 ? `${calls} apply calls, ${Math.round(events / calls)} events each` : 'no apply call';
}

function freshDir(run: VariantRun): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pipeline-'));
  run.dirs.push(dir);
  return dir;
}

/** Connector and ingest running, the rows seeded: seed end → every event applied. */
async function wholeStage(run: VariantRun) {
  const connector = await run.startConnector(`bench-${run.id}-whole`, 'no_data');
  const live = benchWorker({
    groupId: `${connector.topicPrefix}-ingest`,
    topicPrefix: connector.topicPrefix,
    dataDir: freshDir(run),
    avscTypes: run.avscTypes,
    env: INGEST_ENV,
  });
  const running = live.worker.run();
  try {
    const seeded = await seedBenchDatabase(run.database, run.counts, `pipeline-${run.id}`);
    const start = performance.now();
    const cpu0 = sampleCpu(run.stackDir);
    let inKafkaAt: number | undefined;
    // Every second: what each process spent and how far Kafka and ingest got, to see who waits.
    const timeline: TimelinePoint[] = [];
    let last = { at: start, cpu: cpu0 };
    const done = await waitFor(
      'whole pipeline',
      seeded.rows,
      async () => {
        // Once every event is in Kafka the admin requests stop: the broker's CPU is part of the figure.
        const inKafka =
          inKafkaAt === undefined ? await eventsInTopics(run.admin, connector.topicPrefix) : seeded.rows;
        if (inKafkaAt === undefined && inKafka >= seeded.rows) inKafkaAt = performance.now();
        const applied = await handled(live.metrics);
        const now = performance.now();
        if (now - last.at >= 1000) {
          const cpu = sampleCpu(run.stackDir);
          const spent = cpuBetween(last.cpu, cpu);
          const share = (p: keyof CpuSample) => round2(spent[p] / ((now - last.at) / 1000));
          timeline.push({
            s: round2((now - start) / 1000),
            inKafka,
            applied,
            cores: {
              postgres: share('postgres'),
              connect: share('connect'),
              kafka: share('kafka'),
              registry: share('registry'),
              bench: share('bench'),
            },
          });
          last = { at: now, cpu };
        }
        return applied;
      },
      run.timeoutMs,
    );
    const cpu1 = sampleCpu(run.stackDir);
    const inKafka = inKafkaAt === undefined ? undefined : ((inKafkaAt - start) / 1000).toFixed(2);
    return {
      seeded,
      result: stage('whole', seeded.rows, (done.at - start) / 1000, cpuBetween(cpu0, cpu1), {
        timeline,
        note: `${inKafka ? `every event in Kafka ${inKafka} s after the seed's commit; ` : ''}${await eventsPerApply(live.metrics, seeded.rows)}`,
      }),
    };
  } finally {
    live.worker.stop();
    await running;
    await connector.remove();
  }
}

/** A new connector snapshots the filled database, nothing consuming: registration → every row in Kafka. */
async function snapshotStage(run: VariantRun, rows: number) {
  const start = performance.now();
  const cpu0 = sampleCpu(run.stackDir);
  const connector = await run.startConnector(`bench-${run.id}-snap`, 'initial_only');
  const done = await waitFor(
    'snapshot',
    rows,
    () => eventsInTopics(run.admin, connector.topicPrefix),
    run.timeoutMs,
  );
  const cpu1 = sampleCpu(run.stackDir);
  await connector.remove();
  return stage('snapshot', rows, (done.at - start) / 1000, cpuBetween(cpu0, cpu1), {
    note: 'from the registration of the connector',
  });
}

/** A new streaming connector, the rows seeded again, nothing consuming: seed end → every event in Kafka. */
async function streamingStage(run: VariantRun) {
  const connector = await run.startConnector(`bench-${run.id}-stream`, 'no_data');
  const seeded = await seedBenchDatabase(run.database, run.counts, `pipeline-${run.id}-again`);
  const start = performance.now();
  const cpu0 = sampleCpu(run.stackDir);
  const done = await waitFor(
    'streaming source',
    seeded.rows,
    () => eventsInTopics(run.admin, connector.topicPrefix),
    run.timeoutMs,
  );
  const cpu1 = sampleCpu(run.stackDir);
  await connector.remove();
  return {
    topicPrefix: connector.topicPrefix,
    events: seeded.rows,
    companyIds: seeded.companyIds,
    result: stage('streaming', seeded.rows, (done.at - start) / 1000, cpuBetween(cpu0, cpu1)),
  };
}

/** A fresh worker (new group, empty directory) on filled topics: start → every event applied. */
async function ingestStage(run: VariantRun, topicPrefix: string, events: number) {
  const dataDir = freshDir(run);
  const alone = benchWorker({
    groupId: `${topicPrefix}-alone`,
    topicPrefix,
    dataDir,
    avscTypes: run.avscTypes,
    env: INGEST_ENV,
  });
  const cpu0 = sampleCpu(run.stackDir);
  const start = performance.now();
  const running = alone.worker.run();
  try {
    const done = await waitFor('ingest alone', events, () => handled(alone.metrics), run.timeoutMs);
    const cpu1 = sampleCpu(run.stackDir);
    const steady = done.first
      ? Math.round((events - done.first.done) / ((done.at - done.first.at) / 1000))
      : undefined;
    const result = stage('ingest', events, (done.at - start) / 1000, cpuBetween(cpu0, cpu1), {
      steadyEventsPerSecond: steady,
      note: `from the worker start (apply thread, group join, first fetch included); ${await eventsPerApply(alone.metrics, events)}`,
    });
    return { result, dataDir };
  } finally {
    alone.worker.stop();
    await running;
  }
}

/** The peer: Debezium's JDBC sink on the same topics into PostgreSQL. */
async function jdbcSinkStage(run: VariantRun, topicPrefix: string, events: number, format: ConnectorFormat) {
  const topics = await dataTopics(run.admin, topicPrefix);
  const cpu0 = sampleCpu(run.stackDir);
  const sink = await measureJdbcSink(run.admin, topicPrefix, topics, events, {
    batchSize: 2000,
    tasks: 1,
    converters: format,
  });
  const cpu1 = sampleCpu(run.stackDir);
  return stage('jdbc-sink', events, sink.seconds, cpuBetween(cpu0, cpu1), {
    steadyEventsPerSecond: sink.steadyEventsPerSecond ?? undefined,
    note: `${sink.connector}, batch.size 2000, 1 task, ${sink.rowsWritten} rows written`,
  });
}

/**
 * `rebuild` of the ingest stage's data directory (a new generation from the earliest offsets, swapped
 * in): its rate, this process's peak RSS (the builder runs here, apply thread included), its progress
 * lines, and a reader of one company polled through the data-directory link every 100 ms the way
 * the api reads (reopened when the link's target changes): it must see every row at every moment.
 */
async function rebuildStage(
  run: VariantRun,
  built: { topicPrefix: string; events: number; dataDir: string },
  company: string,
) {
  const { topicPrefix, events, dataDir } = built;
  const progress: string[] = [];
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { msg?: string };
        if (entry.msg === 'catching up' || entry.msg === 'caught up') progress.push(line.trim());
      },
    },
  );
  const expected = sitesOf(dataDir, company);
  let minSeen = expected;
  let reads = 0;
  let swaps = 0;
  let peakRss = process.memoryUsage().rss;
  let reading = true;
  const reader = (async () => {
    let target = realpathSync(dataDir);
    while (reading) {
      const now = realpathSync(dataDir);
      if (now !== target) {
        swaps++;
        target = now;
      }
      minSeen = Math.min(minSeen, sitesOf(dataDir, company));
      reads++;
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      await sleep(100);
    }
  })();
  const cpu0 = sampleCpu(run.stackDir);
  const start = performance.now();
  try {
    await rebuild(
      parseConfig({
        ...benchWorkerEnv({ groupId: `${topicPrefix}-rebuild`, topicPrefix, dataDir }),
        INGEST_LOG_LEVEL: 'info',
        ...INGEST_ENV,
      }),
      { logger, avscTypes: run.avscTypes, adoptPlainDirectory: true },
    );
  } finally {
    reading = false;
    await reader;
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu1 = sampleCpu(run.stackDir);
  const after = sitesOf(dataDir, company);
  if (minSeen < expected || after !== expected) {
    throw new Error(
      `rebuild: a reader saw ${minSeen} sites (${after} after the swap), expected ${expected} throughout`,
    );
  }
  return stage('rebuild', events, seconds, cpuBetween(cpu0, cpu1), {
    note: `peak RSS ${Math.round(peakRss / 2 ** 20)} MiB; a reader saw all ${expected} sites of one company in each of ${reads} reads, ${swaps} swap; ${progress.length} progress lines, last: ${progress.at(-1) ?? 'none'}`,
  });
}

/** The sites of `company` as a reader of the data directory sees them now. */
function sitesOf(dataDir: string, company: string): number {
  const db = openCompanyReader(dataDir, company);
  try {
    return (db.prepare('SELECT count(*) AS n FROM sites').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function runVariant(rows: number, shape: 'one' | 'many', format: ConnectorFormat) {
  const id = `${Date.now().toString(36)}${shape[0]}${format[0]}`;
  const database = `pda_bench_${id}`;
  const kafka = new Kafka({ clientId: 'bench-pipeline', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const connectors: BenchConnector[] = [];
  const run: VariantRun = {
    id,
    database,
    counts: countsFor(rows, shape),
    stackDir: readStackEnv().PDA_STACK_DIR ?? join(repoRoot, '.stack'),
    timeoutMs: Math.max(600_000, rows * 20),
    admin,
    avscTypes: await loadAvscTypes(),
    dirs: [],
    async startConnector(name, snapshotMode) {
      const connector = await startBenchConnector({
        name,
        database,
        format,
        snapshotMode,
        overrides: CONNECTOR_OVERRIDES,
      });
      connectors.push(connector);
      return connector;
    },
  };
  const stages: StageResult[] = [];
  const wanted = (name: string) => STAGES.has(name);
  createBenchDatabase(database);
  try {
    log(`${rows} rows, ${shape}, ${format}: ${JSON.stringify(run.counts)}`);
    // The first seed fills the database the snapshot reads; without the whole stage it runs alone.
    const first = wanted('whole')
      ? await wholeStage(run)
      : { seeded: await seedBenchDatabase(database, run.counts, `pipeline-${id}`), result: undefined };
    if (first.result) stages.push(first.result);
    if (wanted('snapshot')) stages.push(await snapshotStage(run, first.seeded.rows));
    if (wanted('streaming') || wanted('ingest') || wanted('jdbc-sink')) {
      const streamed = await streamingStage(run);
      stages.push(streamed.result);
      if (wanted('ingest')) {
        const alone = await ingestStage(run, streamed.topicPrefix, streamed.events);
        stages.push(alone.result);
        if (wanted('rebuild')) {
          const built = { ...streamed, dataDir: alone.dataDir };
          stages.push(await rebuildStage(run, built, streamed.companyIds[0] as string));
        }
      }
      if (wanted('jdbc-sink')) {
        if (await jdbcSinkAvailable()) {
          stages.push(await jdbcSinkStage(run, streamed.topicPrefix, streamed.events, format));
        } else {
          log('jdbc-sink: skipped, no plugin (PDA_STACK_JDBC_SINK=1 bash dev-world/stack/stack.sh up)');
        }
      }
    }
    return { rows, shape, format, counts: run.counts, seedSeconds: round2(first.seeded.seconds), stages };
  } catch (error) {
    log(`${rows} rows, ${shape}, ${format} failed: ${error instanceof Error ? error.stack : String(error)}`);
    throw error;
  } finally {
    for (const connector of connectors) await connector.remove();
    for (const connector of connectors)
      await deletePrefixTopics(admin, connector.topicPrefix).catch(() => {});
    await admin.disconnect();
    dropBenchDatabase(database);
    for (const dir of run.dirs) rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const loadAtStart = loadavg()[0] ?? 0;
  const variants = [];
  for (const rows of SIZES)
    for (const shape of SHAPES)
      for (const format of FORMATS) variants.push(await runVariant(rows, shape, format));
  await warnIfStackSlotLost();
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
