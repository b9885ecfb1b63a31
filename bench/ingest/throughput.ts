/**
 * Ingest throughput benchmark (NOT a test; target ≥ 50,000 events/s applied on 2 cores:
 * docs/architecture.md#performance-targets).
 *
 *   pnpm --filter @pda/bench exec node --max-semi-space-size=64 ingest/throughput.ts [--events 200000] [--companies 300] [--bare]
 *     [--jdbc-sink [--jdbc-batch 2000] [--jdbc-tasks 2]]
 *
 * Fills fresh topics `<bench prefix>.public.<table>` of the running stack's Kafka (.stack/env) with
 * N real-shaped Debezium events (JsonConverter with inline schemas as the shipped connector writes
 * them, unless --bare; precise decimals; creates then updates over 300 companies), then measures in
 * the same run:
 *   1. peer: bare kafkajs consume rate (no decode, no apply);
 *   2. peer: kafkajs consume + decode, one thread (what ingest's main thread does, without handing
 *      the changes to the apply thread);
 *   3. the ingest worker (kafkajs → decode → ProjectionStore.applyBatch → commit), from a new group:
 *      end to end (start-up included) and steady (from the first applied chunk on);
 *   4. peer: ProjectionStore.applyBatch alone on the same decoded changes, one thread, in groups
 *      of the size the worker's apply calls averaged (what the apply thread does);
 *   5. peer: applying the same decoded changes with one transaction per event (a sample);
 *   6. with --jdbc-sink: Debezium's JDBC sink connector in the stack's Kafka Connect, consuming the
 *      same topics into PostgreSQL (peers/jdbc-sink.ts; batch size and tasks from --jdbc-batch,
 *      --jdbc-tasks) — the peer a platform team would deploy instead of ingest.
 * Peers 2 and 4 show each thread's ceiling: the two-thread worker cannot beat the slower of the two,
 * and then only if the threads overlap perfectly on two otherwise idle cores.
 * Reports events/s, peak RSS, the machine and the inputs as one JSON document on stdout.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDecoder, type Decoder, loadAvscTypes } from '@pda/ingest';
import type { Change } from '@pda/projections/model';
import { ProjectionStore } from '@pda/projections/write';
import { Kafka, type KafkaMessage, logLevel } from 'kafkajs';
import { jdbcSinkAvailable, measureJdbcSink } from '../peers/jdbc-sink.ts';
import { MIX } from '../shared/change-mix.ts';
import { benchWorker } from '../shared/ingest-worker.ts';
import { kafkaBrokers } from '../shared/stack-env.ts';
import { throughputEvents } from '../shared/throughput-events.ts';
import { createDataTopics, fillTopics } from '../shared/topic-fill.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    events: { type: 'string', default: '200000' },
    companies: { type: 'string', default: '300' },
    bare: { type: 'boolean', default: false },
    'jdbc-sink': { type: 'boolean', default: false },
    'jdbc-batch': { type: 'string', default: '2000' },
    'jdbc-tasks': { type: 'string', default: '2' },
    'per-event-sample': { type: 'string', default: '5000' },
    chunk: { type: 'string' },
    'in-flight': { type: 'string' },
    'fetch-bytes': { type: 'string' },
    'max-in-flight': { type: 'string' },
    group: { type: 'string' },
    /** Write a CPU profile of the main thread during the ingest phase to this file. */
    profile: { type: 'string' },
  },
});
const N = Number(args.events);
const COMPANIES = Number(args.companies);
const inlineSchema = !args.bare;

const events = (prefix: string) =>
  throughputEvents(prefix, { events: N, companies: COMPANIES, inlineSchema });

const rssPeak = { mb: 0 };
const rssTimer = setInterval(() => {
  rssPeak.mb = Math.max(rssPeak.mb, process.memoryUsage.rss() / 2 ** 20);
}, 50);

async function main() {
  // Other processes on the machine skew every figure: the 1-minute load average is reported.
  const loadAtStart = loadavg()[0];
  const prefix = `bench${Date.now()}`;
  // Checked before the fill: a missing plugin must not cost a whole run.
  if (args['jdbc-sink'] && !(await jdbcSinkAvailable())) {
    throw new Error(
      '--jdbc-sink: restart the stack with PDA_STACK_JDBC_SINK=1 bash dev-world/stack/stack.sh up',
    );
  }
  const kafka = new Kafka({ clientId: 'bench', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const topics = ['companies', ...MIX.map(([t]) => t)].map((t) => `${prefix}.public.${t}`);
  await createDataTopics(admin, topics);

  // ---- fill ----
  // Rows the topics leave behind (distinct keys per topic): the JDBC sink peer's check.
  const distinctKeys = new Set<string>();
  const fillStart = performance.now();
  const bytes = await fillTopics(
    kafka,
    (function* () {
      for (const e of events(prefix)) {
        if (args['jdbc-sink']) distinctKeys.add(`${e.topic}\u0000${e.key}`);
        yield e;
      }
    })(),
  );
  const fillSeconds = (performance.now() - fillStart) / 1000;

  // ---- peer 1: bare kafkajs consume; peer 2: consume + decode (one thread) ----
  const avscTypes = await loadAvscTypes();
  const decoder = createDecoder({ topicPrefix: prefix, bareDecimalMode: 'precise', avscTypes });
  const bare = await consumeAll(kafka, `${prefix}-bare`, topics, () => {});
  let decodeFailures = 0;
  const decodeOnly = await consumeAll(kafka, `${prefix}-decode`, topics, (topic, partition, m) => {
    const r = decoder({ topic, partition, offset: m.offset, key: m.key ?? null, value: m.value ?? null });
    if (r.type !== 'change') decodeFailures++;
  });

  // ---- the ingest worker: consume + decode + apply + commit ----
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  const { worker, metrics } = benchWorker({
    groupId: `${prefix}-ingest`,
    topicPrefix: prefix,
    dataDir,
    avscTypes,
    env: {
      ...(args.chunk ? { INGEST_MAX_BATCH_EVENTS: args.chunk } : {}),
      ...(args['in-flight'] ? { INGEST_PARTITIONS_IN_FLIGHT: args['in-flight'] } : {}),
      ...(args['fetch-bytes'] ? { INGEST_FETCH_MAX_BYTES: args['fetch-bytes'] } : {}),
      ...(args['max-in-flight'] ? { INGEST_MAX_EVENTS_IN_FLIGHT: args['max-in-flight'] } : {}),
      ...(args.group ? { INGEST_APPLY_GROUP_MAX_EVENTS: args.group } : {}),
    },
  });
  const profiler = args.profile ? await startProfiler() : undefined;
  const applyStart = performance.now();
  const running = worker.run();
  const done = async () => {
    const values = (await metrics.events.get()).values;
    return values.reduce((sum, v) => sum + v.value, 0);
  };
  let handled = await done();
  // Steady rate: from the first applied chunk on (start-up = apply thread, group join, first fetch).
  let firstApplied: { at: number; handled: number } | undefined;
  while (handled < N) {
    await new Promise((r) => setTimeout(r, 25));
    handled = await done();
    if (!firstApplied && handled > 0) firstApplied = { at: performance.now(), handled };
  }
  const applyEnd = performance.now();
  const applySeconds = (applyEnd - applyStart) / 1000;
  if (profiler && args.profile) await profiler.stop(args.profile);
  const outcomes = (await metrics.events.get()).values;
  const count = (outcome: string) =>
    outcomes.filter((v) => v.labels.outcome === outcome).reduce((s, v) => s + v.value, 0);
  const applied = count('applied');
  // One observation per apply call (a group of chunks): how much each company transaction carried.
  const applyCalls =
    (await metrics.batchDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  const deadLettered = count('dead_lettered');
  worker.stop();
  await running;

  // ---- peer 6: Debezium's JDBC sink into PostgreSQL, same topics ----
  const jdbcSink = args['jdbc-sink']
    ? {
        ...(await measureJdbcSink(admin, prefix, topics, N, {
          batchSize: Number(args['jdbc-batch']),
          tasks: Number(args['jdbc-tasks']),
        })),
        rowsExpected: distinctKeys.size,
      }
    : undefined;

  // ---- peer 4: apply alone, one thread, in groups of the worker's average apply call ----
  const eventsPerApplyCall = applyCalls > 0 ? Math.round(handled / applyCalls) : null;
  const applyOnly = applyAlone(prefix, eventsPerApplyCall ?? 2000, decoder);

  // ---- peer 5: one transaction per event (sample) ----
  const sample = Math.min(Number(args['per-event-sample']), N);
  const changes: Change[] = [];
  for (const change of decodedChanges(prefix, decoder)) {
    if (changes.length >= sample) break;
    changes.push(change);
  }
  const perEventDir = mkdtempSync(join(tmpdir(), 'bench-per-event-'));
  const store = ProjectionStore.open({ dataDir: perEventDir });
  const perEventStart = performance.now();
  for (const change of changes) store.applyBatch([change]);
  const perEventSeconds = (performance.now() - perEventStart) / 1000;
  store.close();

  // Also the control topics the worker's subscription made the broker auto-create (api_keys, ...).
  const created = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
  await admin.deleteTopics({ topics: [...new Set([...topics, ...created])] }).catch(() => {});
  await admin.disconnect();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(perEventDir, { recursive: true, force: true });
  clearInterval(rssTimer);

  const result = {
    benchmark: 'ingest-throughput',
    machine: {
      cpu: cpus()[0]?.model,
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      // ingest's start script runs with --max-semi-space-size=64; run the benchmark with it too.
      v8Flags: process.execArgv.filter((a) => a.startsWith('--max-')),
      loadAverage1m: { start: round(loadAtStart ?? 0), end: round(loadavg()[0] ?? 0) },
    },
    inputs: {
      events: N,
      companies: COMPANIES,
      format: inlineSchema ? 'JsonConverter schemas.enable=true (as shipped)' : 'JsonConverter bare payload',
      averageMessageBytes: Math.round(bytes / N),
      mix: Object.fromEntries(MIX),
      updatesShare: 0.2,
    },
    fill: { seconds: round(fillSeconds), eventsPerSecond: Math.round(N / fillSeconds) },
    ingest: {
      events: handled,
      applied,
      deadLettered,
      seconds: round(applySeconds),
      eventsPerSecond: Math.round(handled / applySeconds),
      startupSeconds: firstApplied ? round((firstApplied.at - applyStart) / 1000) : null,
      steadyEventsPerSecond: firstApplied
        ? Math.round((handled - firstApplied.handled) / ((applyEnd - firstApplied.at) / 1000))
        : null,
      target: 50_000,
      peakRssMb: Math.round(rssPeak.mb),
      applyCalls,
      eventsPerApplyCall,
    },
    peers: {
      bareKafkajsConsume: bare,
      consumeAndDecodeOneThread: { ...decodeOnly, notDecoded: decodeFailures },
      applyAloneOneThread: applyOnly,
      ...(jdbcSink
        ? {
            debeziumJdbcSink: {
              ...jdbcSink,
              ingestSteadyOverJdbcSinkSteady:
                firstApplied && jdbcSink.steadyEventsPerSecond
                  ? round(
                      (handled - firstApplied.handled) /
                        ((applyEnd - firstApplied.at) / 1000) /
                        jdbcSink.steadyEventsPerSecond,
                    )
                  : null,
              ingestOverJdbcSinkEndToEnd: round(handled / applySeconds / jdbcSink.eventsPerSecond),
            },
          }
        : {}),
      oneTransactionPerEvent: {
        events: changes.length,
        seconds: round(perEventSeconds),
        eventsPerSecond: Math.round(changes.length / perEventSeconds),
      },
    },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

type OnMessage = (topic: string, partition: number, message: KafkaMessage) => void;

/** Reads every event of the topics once with a new group; `onMessage` is the work per event. */
async function consumeAll(kafka: Kafka, groupId: string, topics: string[], onMessage: OnMessage) {
  const consumer = kafka.consumer({ groupId, maxBytes: 64 * 2 ** 20, maxBytesPerPartition: 64 * 2 ** 20 });
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  let seen = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) onMessage(batch.topic, batch.partition, m);
        seen += batch.messages.length;
        if (seen >= N) resolve();
      },
    });
  });
  const seconds = (performance.now() - start) / 1000;
  await consumer.disconnect();
  return { events: seen, seconds: round(seconds), eventsPerSecond: Math.round(seen / seconds) };
}

/** The benchmark's events, decoded as ingest decodes them (peers that apply without Kafka). */
function* decodedChanges(prefix: string, decoder: Decoder): Generator<Change> {
  let offset = 0;
  for (const e of events(prefix)) {
    const r = decoder({ topic: e.topic, partition: 0, offset: String(offset++), key: e.key, value: e.value });
    if (r.type === 'change') yield r.change;
  }
}

/**
 * ProjectionStore.applyBatch on the benchmark's events, decoded group by group (only the apply
 * calls are timed), into a fresh data directory: the apply thread's work without the thread.
 */
function applyAlone(prefix: string, groupSize: number, decoder: Decoder) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-apply-alone-'));
  const store = ProjectionStore.open({ dataDir: dir });
  let applyMs = 0;
  let applied = 0;
  let group: Change[] = [];
  const flush = () => {
    const start = performance.now();
    applied += store.applyBatch(group).applied;
    applyMs += performance.now() - start;
    group = [];
  };
  for (const change of decodedChanges(prefix, decoder)) {
    group.push(change);
    if (group.length >= groupSize) flush();
  }
  if (group.length > 0) flush();
  store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    events: applied,
    groupSize,
    seconds: round(applyMs / 1000),
    eventsPerSecond: Math.round(applied / (applyMs / 1000)),
  };
}

/** The main thread's profile of one phase (run the script under `node --cpu-prof` for the apply thread). */
async function startProfiler() {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(file: string) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

const round = (x: number) => Math.round(x * 100) / 100;

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
