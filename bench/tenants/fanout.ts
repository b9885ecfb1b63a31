/**
 * Tenant fan-out benchmark (NOT a test; issue 11): ingest and api with changes and requests spread
 * over many company files.
 *
 *   pnpm --filter @pda/bench exec node tenants/fanout.ts [--size quick|full] [--companies 10,100,1000]
 *     [--events 60000] [--spread uniform|zipf|both] [--nofile N] [--duration 10] [--warmup 3]
 *
 * For each company count and spread (uniform; Zipf s=1.1: a few big tenants, a long tail), on the
 * running stack's Kafka (.stack/env): fresh topics filled with real-shaped Debezium events (inline
 * schemas, as the shipped connector writes them): the companies' rows, a key granted every
 * company, then N changes (one site per company first, then ingest/throughput.ts's table mix over
 * the companies by the spread). Then:
 *   1. the ingest worker in a child process (shared/run-ingest.ts) into a fresh data directory:
 *      steady events/s (from the first applied chunk on), peak RSS, open descriptors and disk;
 *   2. the api in a child process on that directory (tenants/parts/fanout-api.ts): GET /v1/sites?limit=5,
 *      X-Service-Company drawn per request from the same spread, autocannon with 10 connections;
 *      req/s, p99, RSS and open descriptors.
 * Peers in the same run, measured first and again last (their drift is the run's noise): 10
 * companies uniform (ingest ratio) and 1 company (api ratios), with the same N and duration.
 * --nofile N starts both children under `prlimit --nofile=N:N`.
 * Prints one JSON document on stdout; writes bench/results/tenant-fanout-<date>.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newKeyMaterial } from '@pda/operator-tools/keys';
import { Kafka, logLevel } from 'kafkajs';
import { codeState, machine } from '../shared/machine.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { type IngestResult, notMeasured, runIngest } from '../shared/run-ingest.ts';
import { kafkaBrokers } from '../shared/stack-env.ts';
import {
  biggestShare,
  CASE_TABLES,
  caseEvents,
  DATA_TABLES,
  type Spread,
  setupEventCount,
  ZIPF_S,
} from '../shared/tenant-events.ts';
import { createDataTopics, fillTopics } from '../shared/topic-fill.ts';
import { API_PATH, type ApiResult, runApi } from './parts/fanout-api.ts';
import { type CaseResult, renderReport } from './parts/fanout-report.ts';

const SIZES = {
  quick: { companies: [10, 100, 1000], events: 60_000, duration: 10, warmup: 3 },
  full: { companies: [10, 100, 1000, 5000, 20_000], events: 200_000, duration: 20, warmup: 5 },
} as const;

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    size: { type: 'string', default: 'quick' },
    companies: { type: 'string' },
    events: { type: 'string' },
    spread: { type: 'string', default: 'both' },
    nofile: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '10' },
    'stall-seconds': { type: 'string', default: '120' },
    report: { type: 'string' },
  },
});
if (args.size !== 'quick' && args.size !== 'full') throw new Error('--size is quick or full');
const size = SIZES[args.size];
const companyCounts = args.companies ? args.companies.split(',').map(Number) : [...size.companies];
const dataEvents = Number(args.events ?? size.events);
const spreads: Spread[] =
  args.spread === 'both'
    ? ['uniform', 'zipf']
    : args.spread === 'uniform' || args.spread === 'zipf'
      ? [args.spread]
      : [];
const nofile = args.nofile === undefined ? undefined : Number(args.nofile);
const load = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration ?? size.duration),
  warmupSeconds: Number(args.warmup ?? size.warmup),
};
const stallSeconds = Number(args['stall-seconds']);
if (spreads.length === 0) throw new Error('--spread is uniform, zipf or both');
if (
  ![...companyCounts, dataEvents, load.connections, load.durationSeconds, stallSeconds].every(
    (n) => Number.isInteger(n) && n > 0,
  )
)
  throw new Error(
    '--companies, --events, --connections, --duration and --stall-seconds must be positive integers',
  );
if (nofile !== undefined && !(Number.isInteger(nofile) && nofile > 0))
  throw new Error('--nofile must be a positive integer');
if (Math.max(...companyCounts) > dataEvents)
  throw new Error('--events must be at least the largest company count (one site each)');
const launcher = nofile === undefined ? [] : ['prlimit', `--nofile=${nofile}:${nofile}`];

const log = (line: string) => process.stderr.write(`tenant-fanout: ${line}\n`);
const runId = Date.now().toString(36);
const round = (x: number) => Math.round(x * 100) / 100;

const kafka = new Kafka({ clientId: 'bench-fanout', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
const admin = kafka.admin();
// What a case leaves behind until it ends; removed on the way out, also on Ctrl-C.
const leftovers: { topics: string[]; dataDir: string | undefined } = { topics: [], dataDir: undefined };
async function cleanUp() {
  if (leftovers.topics.length > 0) await admin.deleteTopics({ topics: leftovers.topics }).catch(() => {});
  if (leftovers.dataDir) rmSync(leftovers.dataDir, { recursive: true, force: true });
  leftovers.topics = [];
  leftovers.dataDir = undefined;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: removing this case's topics and data directory`);
    void cleanUp().finally(() => process.exit(130));
  });
}

interface CaseDef {
  readonly companies: number;
  readonly spread: Spread;
  readonly role: 'peer' | 'case';
}

async function runCase(def: CaseDef, index: number): Promise<CaseResult> {
  const started = performance.now();
  const prefix = `fanout${runId}n${index}`;
  const topics = CASE_TABLES.map((table) => `${prefix}.public.${table}`);
  leftovers.topics = topics;
  await createDataTopics(admin, topics);
  try {
    const key = newKeyMaterial();
    const fillStart = performance.now();
    const events = caseEvents({ topicPrefix: prefix, ...def, dataEvents, key, keyId: randomUUID() });
    const bytes = await fillTopics(kafka, events);
    const fillSeconds = (performance.now() - fillStart) / 1000;
    const dataDir = mkdtempSync(join(tmpdir(), 'tenant-fanout-'));
    leftovers.dataDir = dataDir;
    const setupEvents = setupEventCount(def.companies);
    const ingest: IngestResult = await runIngest({
      groupId: `${prefix}-ingest`,
      topicPrefix: prefix,
      dataDir,
      expectedEvents: setupEvents + dataEvents,
      dataTables: DATA_TABLES,
      companies: def.companies,
      launcher,
      stallSeconds,
    });
    const api: ApiResult =
      ingest.failure === null
        ? await runApi({
            dataDir,
            key: key.key,
            companies: def.companies,
            spread: def.spread,
            ...load,
            launcher,
          })
        : { measurement: null, process: null, nofile: null, failure: 'not measured: ingest did not finish' };
    return {
      ...def,
      dataEvents,
      setupEvents,
      fill: { seconds: round(fillSeconds), bytes },
      ingest,
      api,
      seconds: round((performance.now() - started) / 1000),
    };
  } finally {
    await cleanUp();
  }
}

function failedCase(def: CaseDef, error: unknown): CaseResult {
  const failure = `case failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500);
  return {
    ...def,
    dataEvents,
    setupEvents: setupEventCount(def.companies),
    fill: { seconds: 0, bytes: 0 },
    ingest: notMeasured(failure),
    api: { measurement: null, process: null, nofile: null, failure: 'not measured' },
    seconds: 0,
  };
}

async function main() {
  const runStart = performance.now();
  const startedAt = new Date().toISOString().slice(11, 16).replace(':', '');
  const loadStart = loadavg();
  // The code measured: read before the first case (files edited during the run are not in it).
  const code = codeState(repoRoot);
  await admin.connect();
  const peers: CaseDef[] = [
    { companies: 1, spread: 'uniform', role: 'peer' },
    { companies: 10, spread: 'uniform', role: 'peer' },
  ];
  const isPeer = (c: number, s: Spread) => peers.some((p) => p.companies === c && p.spread === s);
  const plan: CaseDef[] = [
    ...peers,
    ...companyCounts.flatMap((companies) =>
      spreads
        .filter((spread) => !isPeer(companies, spread))
        .map((spread) => ({ companies, spread, role: 'case' as const })),
    ),
    ...peers,
  ];
  log(
    `${plan.length} cases (peers first and last), ${dataEvents} change events each, api ${load.durationSeconds} s after ${load.warmupSeconds} s warm-up`,
  );
  const results: CaseResult[] = [];
  for (const [index, def] of plan.entries()) {
    log(
      `case ${index + 1}/${plan.length}: ${def.companies} companies, ${def.spread}${def.role === 'peer' ? ' (peer)' : ''}`,
    );
    // A case that throws (Kafka, the fill) is a row with its error, not the end of the run.
    const result = await runCase(def, index).catch((error: unknown) => failedCase(def, error));
    const m = result.api.measurement;
    log(
      `  ingest ${result.ingest.steadyDataEventsPerSecond?.toFixed(0) ?? '-'} events/s${result.ingest.failure ? ` (${result.ingest.failure})` : ''}; api ${m?.requestsPerSecond ?? '-'} req/s p99 ${m?.p99Ms ?? '-'} ms${result.api.failure ? ` (${result.api.failure})` : ''}; ${result.seconds} s`,
    );
    results.push(result);
  }
  await admin.disconnect();

  const date = new Date().toISOString().slice(0, 10);
  const machineInfo = machine(
    loadStart,
    nofile === undefined ? 'inherited' : { soft: nofile, hard: nofile, via: launcher.join(' ') },
  );
  const inputs = {
    size: args.size,
    companies: companyCounts,
    spreads,
    zipfExponent: ZIPF_S,
    biggestTenantShare: Object.fromEntries(
      companyCounts.flatMap((c) =>
        spreads.map((s) => [`${c} ${s}`, Math.round(biggestShare(s, c) * 10_000) / 10_000]),
      ),
    ),
    dataEventsPerCase: dataEvents,
    format: 'JsonConverter schemas.enable=true (as shipped)',
    request: `GET ${API_PATH}`,
    ...load,
    // Settings the children inherit from this process's environment (caches, limits).
    environment: Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name.startsWith('INGEST_') || name.startsWith('API_')),
    ),
  };
  const totalSeconds = round((performance.now() - runStart) / 1000);
  // tenant-fanout-<date>.md is the default quick run's; other sizes and options get their own name.
  const custom = ['companies', 'events', 'spread', 'nofile', 'duration', 'warmup', 'connections'].some(
    (option) => process.argv.some((a) => a === `--${option}` || a.startsWith(`--${option}=`)),
  );
  const variant = [args.size === 'full' ? 'full' : '', custom ? 'custom' : ''].filter(Boolean).join('-');
  const out =
    args.report ??
    join(
      resultsDir,
      // Custom runs of one day would overwrite each other: their name carries the start time too.
      `tenant-fanout-${variant ? `${variant}-` : ''}${date}${custom ? `-${startedAt}` : ''}.md`,
    );
  const command = ['tenants/fanout.ts', ...process.argv.slice(2).filter((a) => a !== '--')].join(' ');
  const document = renderReport({ date, command, machine: machineInfo, code, inputs, results, totalSeconds });
  mkdirSync(join(out, '..'), { recursive: true });
  writeFileSync(out, document.markdown);
  log(`report written to ${out} (${totalSeconds} s in all)`);
  process.stdout.write(
    `${JSON.stringify({ benchmark: 'tenant-fanout', machine: machineInfo, code, inputs, peers: document.peers, cases: document.cases, totalSeconds, report: out }, null, 2)}\n`,
  );
}

main().then(
  () => process.exit(0),
  async (error) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    await cleanUp();
    process.exit(1);
  },
);
