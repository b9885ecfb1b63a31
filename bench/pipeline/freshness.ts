/**
 * Freshness benchmark (NOT a test; docs/architecture.md#performance-targets: p99 from PostgreSQL
 * commit to visible in the API at 1,000 changes/s).
 *
 *   bash dev-world/stack/stack.sh up
 *   pnpm --filter @pda/bench exec node pipeline/freshness.ts [--rate 1000] [--seconds 30] [--rows-per-tx 10]
 *        [--cold] [--restart-connect-at S] [--traces on|off]
 *
 * On the running native stack, through the shipped connector (PostgreSQL → Debezium → Kafka):
 *   1. an ingest worker (this process, apply thread as in production) on a fresh data directory and
 *      a new consumer group catches up with the existing topics;
 *   2. one new company gets `rate` site changes per second for `seconds` (80 % inserts, 20 % updates
 *      of its earlier sites; one upsert statement per transaction of `rows-per-tx` rows); the time
 *      each COMMIT returned is recorded per change (the site's `name` carries a change token);
 *   3. a reader polls the company's projection file every 5 ms with a read-only connection — the
 *      way the api reads it, no cache in between — and records when each token became visible;
 *   4. peer, same run: a bare kafkajs consumer of the sites topic records when each token reached
 *      Kafka (Debezium's share of the latency);
 *   5. two partners following the change feed on an api over the same files
 *      (pipeline/parts/feed-follower.ts) record when each token reached them: one with long polls
 *      (`wait`), one on a live NDJSON stream (`live=true`);
 *   6. the worker's batch spans (its tracer, an in-memory exporter; `--traces off` leaves it out)
 *      give each change's stages inside ingest: source commit → Kafka → fetched → decoded → applied
 *      (pipeline/parts/trace-stages.ts).
 * Prints one JSON document: commit → in Kafka, commit → visible, commit → feed (long poll, live
 * stream) (p50, p90, p99, max), the stages, rates, and commit → visible per window of --window
 * seconds of commit time (the timeline: how a cold start or a restart shows).
 * `--cold` restarts the stack's JVMs (Kafka, the registry, Connect: `stack.sh stop` each, then `up`)
 * before the run, so it measures the first minute of a freshly started stack; `--restart-connect-at S`
 * restarts Kafka Connect (TERM, then `up`) S seconds into the writes: what a Connect restart costs
 * a partner in latency.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { loadAvscTypes, registerKafkajsCodecs } from '@pda/ingest';
import type { ProjectionDb } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import { startTracing } from '@pda/tracing';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { benchWorker } from '../shared/ingest-worker.ts';
import { repoRoot } from '../shared/paths.ts';
import { kafkaBrokers, readStackEnv, stackEnvFile, stackPgPool } from '../shared/stack-env.ts';
import { followSitesFeed } from './parts/feed-follower.ts';
import { type ChangeStages, changeStages } from './parts/trace-stages.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '30' },
    'rows-per-tx': { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    cold: { type: 'boolean', default: false },
    'restart-connect-at': { type: 'string' },
    traces: { type: 'string', default: 'on' },
  },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const ROWS_PER_TX = Number(args['rows-per-tx']);
const WINDOW_S = Number(args.window);
const RESTART_CONNECT_AT_S =
  args['restart-connect-at'] === undefined ? undefined : Number(args['restart-connect-at']);
const POLL_MS = 5;
const log = (line: string) => process.stderr.write(`freshness: ${line}\n`);
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** token → when its COMMIT returned, when it reached Kafka, when it was visible in the projection. */
interface Timing {
  committed?: number;
  inKafka?: number;
  visible?: number;
  /** When a partner following the change feed received it: long polls, a live stream. */
  inFeed?: number;
  inStream?: number;
}

const stackScript = join(repoRoot, 'dev-world/stack/stack.sh');

/** The JVMs stopped and started again, PostgreSQL and the data kept: a stack in its first minute. */
function restartStackJvms(): void {
  for (const component of ['connect', 'registry', 'kafka']) {
    execFileSync('bash', [stackScript, 'stop', component], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  execFileSync('bash', [stackScript, 'up'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

async function main() {
  if (args.cold) {
    log('restarting Kafka, the registry and Connect (--cold)');
    restartStackJvms();
  }
  const stackUpAt = nowMs();
  const env = readStackEnv();
  if (!env.PDA_PG_HOST)
    throw new Error(`no ${stackEnvFile()}: start the stack (bash dev-world/stack/stack.sh up)`);
  const topicPrefix = env.PDA_TOPIC_PREFIX ?? 'pda';
  const pool = stackPgPool(8);
  const run = `fr${Date.now().toString(36)}`;
  const timings = new Map<string, Timing>();
  const timing = (token: string) => {
    let t = timings.get(token);
    if (!t) {
      t = {};
      timings.set(token, t);
    }
    return t;
  };

  // ---- the ingest worker, caught up ----
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-freshness-'));
  const spans = new InMemorySpanExporter();
  const tracing =
    args.traces === 'off'
      ? undefined
      : startTracing({
          serviceName: 'pda-ingest',
          exporter: spans,
          env: { OTEL_TRACES_SAMPLER: 'always_on' },
        });
  const { worker } = benchWorker({
    groupId: `${run}-ingest`,
    topicPrefix,
    dataDir,
    avscTypes: await loadAvscTypes(),
    ...(tracing && { tracer: tracing.tracer }),
  });
  const running = worker.run();
  const caughtUpStart = performance.now();
  for (;;) {
    const lag = worker.source()?.lag();
    if (lag?.measured && lag.total === 0) break;
    await sleep(200);
  }
  log(`ingest caught up with the existing topics in ${Math.round(performance.now() - caughtUpStart)} ms`);

  // ---- peer: when each token reaches Kafka ----
  registerKafkajsCodecs(); // the connector's zstd batches
  const kafka = new Kafka({ clientId: run, brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const tokenPattern = new RegExp(`(${run}-\\d+)`);
  const peer = kafka.consumer({ groupId: `${run}-peer`, maxWaitTimeInMs: 50 });
  await peer.connect();
  await peer.subscribe({ topics: [`${topicPrefix}.public.sites`], fromBeginning: false });
  const peerReady = new Promise<void>((resolve) => peer.on(peer.events.GROUP_JOIN, () => resolve()));
  await peer.run({
    eachMessage: async ({ message }) => {
      const arrived = nowMs();
      // The token is the site's name: plain text in a JSON value and in an Avro one alike.
      const token = message.value ? tokenPattern.exec(message.value.toString('latin1'))?.[1] : undefined;
      if (token) timing(token).inKafka ??= arrived;
    },
  });
  await peerReady;
  await sleep(1000); // the peer's first fetch position is set

  // ---- one company, then `rate` changes per second ----
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO companies (name, currency) VALUES ($1, 'EUR') RETURNING id`,
    [`freshness ${run}`],
  );
  const companyId = rows[0]?.id as string;
  let reader: ProjectionDb | undefined;
  while (!reader) {
    try {
      reader = openCompanyReader(dataDir, companyId);
    } catch {
      await sleep(20);
    }
  }

  const feed = await followSitesFeed({
    dataDir,
    pool,
    companyId,
    nowMs,
    onName: (follower, name, at) => {
      if (!name.startsWith(run)) return;
      if (follower === 'poll') timing(name).inFeed ??= at;
      else timing(name).inStream ??= at;
    },
  });

  // The reader: what became visible since the last poll (the change-time index), every 5 ms.
  let lastChangedUs = 0;
  const poll = reader.prepare(
    'SELECT name, _changed_us FROM sites WHERE _changed_us > ? ORDER BY _changed_us',
  );
  let polling = true;
  const pollLoop = (async () => {
    while (polling) {
      const seenAt = nowMs();
      for (const row of poll.all(lastChangedUs) as { name: string; _changed_us: number }[]) {
        lastChangedUs = row._changed_us;
        timing(row.name).visible ??= seenAt;
      }
      await sleep(POLL_MS);
    }
  })();

  const txPerSecond = RATE / ROWS_PER_TX;
  const total = RATE * SECONDS;
  const siteIds: string[] = [];
  /** Change tokens per site, in write order (an update supersedes the site's earlier tokens). */
  const tokensBySite = new Map<string, string[]>();
  let written = 0;
  const inFlight = new Set<Promise<void>>();
  const writeStart = nowMs();
  let connectRestart: { at: number; done?: number } | undefined;
  const restartTimer =
    RESTART_CONNECT_AT_S === undefined
      ? undefined
      : setTimeout(() => {
          const restart: { at: number; done?: number } = { at: nowMs() };
          connectRestart = restart;
          log('restarting Kafka Connect (--restart-connect-at)');
          // Asynchronous: the writes go on at their rate while Connect is down.
          spawn('bash', [stackScript, 'restart', 'connect'], { stdio: ['ignore', 'ignore', 'inherit'] }).on(
            'exit',
            () => {
              restart.done = nowMs();
            },
          );
        }, RESTART_CONNECT_AT_S * 1000);
  for (let tx = 0; written < total; tx++) {
    // Pace by the schedule, not by the previous transaction (a slow commit must not lower the rate).
    const due = writeStart + (tx * 1000) / txPerSecond;
    if (due > nowMs()) await sleep(due - nowMs());
    const batch: { id: string | null; token: string }[] = [];
    for (let r = 0; r < ROWS_PER_TX && written < total; r++, written++) {
      const update = written % 5 === 4 && siteIds.length > 0;
      batch.push({
        id: update ? (siteIds[(written * 7919) % siteIds.length] as string) : null,
        token: `${run}-${written}`,
      });
    }
    const write = (async () => {
      const result = await pool.query<{ id: string; name: string }>(
        `INSERT INTO sites (id, company_id, name, city)
         SELECT coalesce(r.id::uuid, gen_random_uuid()), $1, r.token, 'Lyon'
         FROM json_to_recordset($2::json) AS r(id text, token text)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, updated_at = now()
         RETURNING id, name`,
        [companyId, JSON.stringify(batch)],
      );
      const committed = nowMs();
      for (const b of batch) timing(b.token).committed = committed;
      for (const row of result.rows) {
        const tokens = tokensBySite.get(row.id);
        if (tokens) tokens.push(row.name);
        else {
          tokensBySite.set(row.id, [row.name]);
          siteIds.push(row.id);
        }
      }
    })();
    inFlight.add(write);
    write.finally(() => inFlight.delete(write)).catch(() => {});
  }
  await Promise.all(inFlight);
  if (restartTimer) clearTimeout(restartTimer);
  const writeSeconds = (nowMs() - writeStart) / 1000;
  log(`wrote ${written} changes in ${writeSeconds.toFixed(1)} s; waiting for the last to be visible`);

  // Done when every site's latest value is visible.
  const seq = (token: string) => Number(token.slice(token.lastIndexOf('-') + 1));
  for (const tokens of tokensBySite.values()) tokens.sort((a, b) => seq(a) - seq(b));
  const latestVisible = () => [...tokensBySite.values()].every((t) => timing(t.at(-1) as string).visible);
  const deadline = nowMs() + 120_000;
  while (nowMs() < deadline && !latestVisible()) await sleep(50);
  polling = false;
  await pollLoop;
  // The feed's partner reads the same files through the api: give it its own few seconds.
  const inFeed = () =>
    [...tokensBySite.values()].every((t) => {
      const last = timing(t.at(-1) as string);
      return last.inFeed !== undefined && last.inStream !== undefined;
    });
  const feedDeadline = nowMs() + 10_000;
  while (nowMs() < feedDeadline && !inFeed()) await sleep(50);
  const feedPages = feed.pages();
  await feed.stop();
  // A value superseded before a poll saw it became visible (as its newer value) no later than that.
  for (const tokens of tokensBySite.values()) {
    for (let i = tokens.length - 2; i >= 0; i--) {
      const t = timing(tokens[i] as string);
      const next = timing(tokens[i + 1] as string).visible;
      if (t.visible === undefined && next !== undefined) t.visible = next;
    }
  }
  const ours = () => [...timings.entries()].filter(([token]) => token.startsWith(run));
  const latencies = (pick: (t: Timing) => number | undefined) =>
    ours()
      .map(([, t]) =>
        t.committed !== undefined && pick(t) !== undefined ? (pick(t) as number) - t.committed : undefined,
      )
      .filter((x): x is number => x !== undefined)
      .sort((a, b) => a - b);
  const summary = (values: number[]) => ({
    samples: values.length,
    p50Ms: pct(values, 0.5),
    p90Ms: pct(values, 0.9),
    p99Ms: pct(values, 0.99),
    maxMs: values.length ? Math.round(values[values.length - 1] as number) : null,
  });
  const visible = latencies((t) => t.visible);
  const inKafka = latencies((t) => t.inKafka);
  // Superseded values reach the feed as their newer value (a record comes at its latest change).
  for (const tokens of tokensBySite.values()) {
    for (let i = tokens.length - 2; i >= 0; i--) {
      const t = timing(tokens[i] as string);
      const next = timing(tokens[i + 1] as string).inFeed;
      if (t.inFeed === undefined && next !== undefined) t.inFeed = next;
    }
  }
  for (const tokens of tokensBySite.values()) {
    for (let i = tokens.length - 2; i >= 0; i--) {
      const t = timing(tokens[i] as string);
      const next = timing(tokens[i + 1] as string).inStream;
      if (t.inStream === undefined && next !== undefined) t.inStream = next;
    }
  }
  const inFeedLatencies = latencies((t) => t.inFeed);
  const inStreamLatencies = latencies((t) => t.inStream);
  await tracing?.provider?.forceFlush();
  const stages = changeStages(spans.getFinishedSpans(), companyId);
  const stage = (pick: (s: ChangeStages) => number) => summary(stages.map(pick).sort((a, b) => a - b));
  const notVisible = ours().filter(([, t]) => t.visible === undefined).length;
  // Commit → visible by window of commit time: the first minute of a cold stack, or a restart, shows here.
  const timeline: Array<{ fromS: number } & ReturnType<typeof summary>> = [];
  for (let from = 0; from < writeSeconds; from += WINDOW_S) {
    const inWindow = ours()
      .map(([, t]) => t)
      .filter((t) => t.committed !== undefined && t.visible !== undefined)
      .filter((t) => {
        const s = ((t.committed as number) - writeStart) / 1000;
        return s >= from && s < from + WINDOW_S;
      })
      .map((t) => (t.visible as number) - (t.committed as number))
      .sort((a, b) => a - b);
    timeline.push({ fromS: from, ...summary(inWindow) });
  }

  // ---- clean up: the company's rows leave PostgreSQL (and, through the pipeline, the projection) ----
  reader.close();
  await peer.disconnect();
  worker.stop();
  await running;
  await tracing?.shutdown();
  await pool.query('DELETE FROM sites WHERE company_id = $1', [companyId]);
  await pool.query('DELETE FROM companies WHERE id = $1', [companyId]);
  await pool.end();
  rmSync(dataDir, { recursive: true, force: true });

  process.stdout.write(
    `${JSON.stringify(
      {
        benchmark: 'freshness',
        machine: {
          cpu: cpus()[0]?.model,
          cores: cpus().length,
          node: process.version,
          loadAverage1m: round(loadavg()[0] ?? 0),
        },
        inputs: {
          cold: args.cold,
          restartConnectAtS: RESTART_CONNECT_AT_S ?? null,
          changesPerSecond: RATE,
          seconds: SECONDS,
          rowsPerTransaction: ROWS_PER_TX,
          updatesShare: 0.2,
          pollMs: POLL_MS,
          traces: args.traces,
        },
        achieved: {
          changes: written,
          seconds: round(writeSeconds),
          changesPerSecond: Math.round(written / writeSeconds),
        },
        commitToVisible: { ...summary(visible), notVisibleWithin60s: notVisible, targetP99Ms: 1000 },
        peerCommitToKafka: summary(inKafka),
        commitToFeed: { ...summary(inFeedLatencies), pages: feedPages },
        commitToLiveStream: summary(inStreamLatencies),
        // Per change of the company listed on a batch span (the first 256 of each batch).
        stagesFromTraces: tracing
          ? {
              spans: spans.getFinishedSpans().length,
              changesTimed: stages.length,
              commitToKafka: stage((s) => s.commitToKafka),
              kafkaToFetched: stage((s) => s.kafkaToFetched),
              fetchedToDecoded: stage((s) => s.fetchedToDecoded),
              decodedToApplied: stage((s) => s.decodedToApplied),
              commitToApplied: stage((s) => s.commitToApplied),
            }
          : null,
        // Seconds from the stack's restart (--cold) to the first write; the restart's own span.
        writesStartedSecondsAfterStackUp: args.cold ? round((writeStart - stackUpAt) / 1000) : null,
        connectRestart: connectRestart
          ? {
              atS: round((connectRestart.at - writeStart) / 1000),
              tookS: connectRestart.done ? round((connectRestart.done - connectRestart.at) / 1000) : null,
            }
          : null,
        commitToVisibleByWindow: { windowSeconds: WINDOW_S, windows: timeline },
      },
      null,
      2,
    )}\n`,
  );
}

function pct(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

const round = (x: number) => Math.round(x * 100) / 100;

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
