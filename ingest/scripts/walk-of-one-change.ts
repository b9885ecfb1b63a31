/**
 * The walk of one change, counted by running it: the files of this repository that one `sites`
 * change passes through, from the batch the Kafka client hands over to the offset committed for
 * it, and how often the walk comes back to a file it had left.
 *
 *   node ingest/scripts/walk-of-one-change.ts [--trace]
 *
 * How it counts: the captured Avro records of test/fixtures/debezium-avro are applied through the
 * worker's own parts (kafka/source.ts with a client that delivers them, batch/pipeline.ts, the
 * decoder, ProjectionStore) until only the scenario's last `sites` change is left; then a thread
 * of this process connects to its inspector and steps through that last batch statement by
 * statement (Debugger.stepInto), from the client's batch callback until the committer hands the
 * offset to the client. Code of node_modules and of Node itself is stepped over (blackboxed), so
 * only the repository's files are seen. "Files" = the distinct files of the steps; "returns" =
 * steps into a file that is not the previous step's file and was already visited (a call coming
 * back, or a second call into a file left before). The apply runs on this thread (the in-process
 * sink, as with INGEST_APPLY_THREAD=false); the apply thread's seam adds the files printed at the
 * end, which are counted by reading (another isolate's steps cannot be followed from here).
 * `--trace` prints the walk, one line per change of file.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SOURCE_TABLES } from '@pda/projections/model';
import { ProjectionStore } from '@pda/projections/write';
import pino from 'pino';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { createDecoder, type RawRecord } from '../src/decode/index.ts';
import type { FetchedBatch, KafkaClient, PartitionOffset } from '../src/kafka/client.ts';
import { createKafkaSource } from '../src/kafka/source.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { loadAvscTypes } from '../src/schema-types.ts';
import { avroFixture } from '../tests/support/fixtures.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const showTrace = process.argv.includes('--trace');

/** The stepping thread: pauses this (main) thread's isolate and steps it until the end marker. */
const STEPPER = `
const { Session } = require('node:inspector');
const { parentPort } = require('node:worker_threads');
const session = new Session();
session.connectToMainThread();
const steps = [];
const urls = new Map();
session.on('Debugger.scriptParsed', ({ params }) => urls.set(params.scriptId, params.url));
// A session holds no handle: this keeps the thread alive until terminated.
setInterval(() => {}, 1 << 30);
session.on('Debugger.paused', ({ params }) => {
  const top = params.callFrames[0];
  if (top.functionName === 'walkEnded') {
    session.post('Debugger.resume');
    parentPort.postMessage({ steps });
    return;
  }
  steps.push({
    url: urls.get(top.location.scriptId) ?? top.url,
    fn: top.functionName,
    line: top.location.lineNumber + 1,
    stack: params.callFrames.map((f) => urls.get(f.location.scriptId) ?? f.url),
  });
  session.post('Debugger.stepInto');
});
session.post('Debugger.enable', () => {
  session.post('Debugger.setBlackboxPatterns', { patterns: ['/node_modules/', '^node:'] }, () =>
    parentPort.postMessage('ready'),
  );
});
`;

interface Step {
  readonly url: string;
  readonly fn: string;
  readonly line: number;
}

/** Called when the walk is over; the stepper resumes when it sees this function on top. */
function walkEnded(): void {
  // biome-ignore lint/suspicious/noDebugger: ends the walk even if a step was lost.
  debugger;
}

/** A Kafka client seam (kafka/client.ts) that delivers the given batches and records commits. */
function deliveringClient(
  batches: AsyncIterable<FetchedBatch>,
  onCommit: (o: PartitionOffset[]) => void,
  walking: () => boolean,
) {
  const client: KafkaClient = {
    admin: {
      connect: async () => {},
      disconnect: async () => {},
      listTopics: async () => [...SOURCE_TABLES.map((t) => `pda.public.${t}`)],
      createTopics: async () => {},
      cleanupPolicies: async (topics) => new Map(topics.map((t) => [t, 'compact'])),
      topicOffsets: async () => [{ partition: 0, low: '0', high: '0' }],
      groupOffsets: async () => [],
    },
    consumer(options, events) {
      let stopped = false;
      return {
        async start(eachBatch) {
          events.joined({ groupId: options.groupId, memberId: 'walk' });
          for await (const batch of batches) {
            // biome-ignore lint/suspicious/noDebugger: the stepping thread starts the walk here.
            if (walking()) debugger;
            await eachBatch(batch, {
              heartbeat: async () => {},
              owned: () => !stopped,
              handedOver: () => {},
            });
          }
        },
        commit: async (offsets) => onCommit([...offsets]),
        pause: () => {},
        resume: () => {},
        seek: () => {},
        stop: async () => {
          stopped = true;
        },
      };
    },
    leaveGroup: async () => 'left',
    isAuthenticationFailure: () => false,
    isRetriable: () => false,
  };
  return client;
}

const batchOf = (records: RawRecord[]): FetchedBatch => {
  const first = records[0] as RawRecord;
  const last = records[records.length - 1] as RawRecord;
  return {
    topic: first.topic,
    partition: first.partition,
    records,
    highWatermark: String(Number(last.offset) + 1),
  };
};

async function main(): Promise<void> {
  const { records, writerSchemas } = avroFixture();
  const decoder = createDecoder({
    topicPrefix: 'pda',
    bareDecimalMode: 'precise',
    avscTypes: await loadAvscTypes(),
    writerSchemas,
  });
  // The scenario's last update of a site: a row that exists, in a company file already open.
  const walkedAt = records.findLastIndex((r) => {
    if (r.topic !== 'pda.public.sites') return false;
    const decoded = decoder(r);
    return decoded.type === 'change' && decoded.change.kind === 'upsert' && decoded.change.op === 'u';
  });
  if (walkedAt < 0) throw new Error('the fixture has no update of a site');
  const walked = records[walkedAt] as RawRecord;
  const before = records.slice(0, walkedAt);

  const dataDir = mkdtempSync(join(tmpdir(), 'walk-of-one-change-'));
  const logger = pino({ level: 'silent' });
  const store = ProjectionStore.open({ dataDir });
  const pipeline = createPipeline({ decoder, sink: inProcessSink(store), metrics: createMetrics(), logger });

  // One batch per run of a topic's records, as a fetch of one partition would bring them.
  const warmUp: FetchedBatch[] = [];
  for (const record of before) {
    const open = warmUp[warmUp.length - 1];
    if (open && open.topic === record.topic) (open.records as RawRecord[]).push(record);
    else warmUp.push(batchOf([record]));
  }
  let commits = 0;
  let walking = false;
  const committed = (offsets: PartitionOffset[]) => {
    commits++;
    if (walking && offsets.some((o) => o.topic === walked.topic)) walkEnded();
  };
  const stepper = new Worker(STEPPER, { eval: true });
  stepper.on('error', (error) => console.error('the stepping thread failed:', error));
  const [ready] = await once(stepper, 'message');
  if (ready !== 'ready') throw new Error('the stepping thread did not start');
  const stepsDone = once(stepper, 'message') as Promise<[{ steps: Step[] }]>;

  let walkDone!: () => void;
  const walkOver = new Promise<void>((resolve) => {
    walkDone = resolve;
  });
  async function* batches(): AsyncGenerator<FetchedBatch> {
    for (const batch of warmUp) yield batch;
    // Everything before has been applied and committed: the walked change meets warm caches.
    while (commits < warmUp.length) await new Promise((r) => setTimeout(r, 10));
    // The store looks at its files on disk at most every 2 s (store.ts ON_DISK_CHECK_MS): after a
    // quiet 2.1 s the walked change always includes that look, so the count does not depend on
    // how fast the warm-up ran.
    await new Promise((r) => setTimeout(r, 2_100));
    walking = true;
    yield batchOf([walked]);
    walkDone();
  }

  const source = createKafkaSource({
    client: deliveringClient(batches(), committed, () => walking),
    brokers: ['walk:9092'],
    clientId: 'walk',
    groupId: 'walk',
    topics: SOURCE_TABLES.map((t) => `pda.public.${t}`),
    fromBeginning: true,
    maxBatchEvents: 2_000,
    fetchMaxBytes: 1 << 20,
    sessionTimeoutMs: 30_000,
    partitionsInFlight: 1,
    maxEventsInFlight: 2_000,
    logger,
  });
  const stop = new AbortController();
  const running = source.run(
    { prepare: (r) => pipeline.prepare(r), commit: async (p) => void (await pipeline.apply(p)) },
    stop.signal,
  );
  const [{ steps }] = await stepsDone;
  await walkOver;
  stop.abort();
  await running;
  await stepper.terminate();
  store.close();
  rmSync(dataDir, { recursive: true, force: true });
  report(steps);
}

function report(steps: readonly Step[]): void {
  const fileOf = (url: string) => relative(REPO, fileURLToPath(url));
  // The visits: consecutive steps in one file are one visit. This script's own client and
  // handler are not counted.
  const visits: { file: string; fn: string; line: number }[] = [];
  for (const step of steps) {
    if (!step.url.startsWith('file:')) continue;
    const file = fileOf(step.url);
    if (file.startsWith('ingest/scripts/')) continue;
    if (visits[visits.length - 1]?.file !== file) visits.push({ file, fn: step.fn, line: step.line });
  }
  // The walk ends when the write has committed: the last visit of the store (ProjectionStore.applyBatch
  // returning). What follows (offsets) is the Kafka side's bookkeeping, printed with --trace.
  const end = visits.findLastIndex((v) => v.file === 'projections/src/write/store.ts');
  const walk = visits.slice(0, end + 1);
  const visited = new Set<string>();
  let returns = 0;
  let bounces = 0;
  walk.forEach((visit, i) => {
    if (visited.has(visit.file)) {
      // A → B → A: B was a helper that called no other file: a bounce, not a return of the walk.
      if (walk[i - 2]?.file === visit.file) bounces++;
      else returns++;
    }
    visited.add(visit.file);
  });
  if (showTrace) for (const v of visits) console.log(`${v.file}:${v.line} ${v.fn}`);
  const files = [...visited];
  console.log(
    JSON.stringify({
      change: 'the last update of a site in the scenario (test/fixtures/debezium-avro)',
      files: files.length,
      returns,
      helperBounces: bounces,
      visits: walk.length,
      byPackage: Object.fromEntries(
        [...new Set(files.map((f) => f.split('/')[0]))].map((p) => [
          p,
          files.filter((f) => f.startsWith(`${p}/`)).length,
        ]),
      ),
      filesVisited: files,
    }),
  );
}

await main();
