/**
 * What traces cost (NOT a test; bench/README.md, "tracing cost"; issue 37 item 1): in one run, on
 * the same inputs, each deployable with traces off, on at 1 % (`traceidratio` 0.01) and on at 100 %
 * (`always_on`), exporting over OTLP/HTTP to a real Jaeger the benchmark starts (@pda/dev-world/jaeger).
 *
 *   pnpm --filter @pda/bench exec node --max-semi-space-size=64 pipeline/tracing-cost.ts
 *     [--events 150000] [--companies 300] [--sites 100000] [--rounds 2] [--connections 10]
 *     [--duration 5] [--warmup 2] [--skip-ingest] [--skip-api] [--out results/<file>.md]
 *
 * 1. ingest: fresh topics of the running stack's Kafka filled once (shared/throughput-events.ts),
 *    then per mode the real worker from a new consumer group into a fresh data directory
 *    (parts/tracing-ingest.ts): steady events/s, CPU per event;
 * 2. api: one list fixture in a temporary directory, per mode a new api process with that mode's
 *    OTEL_* variables (parts/tracing-api.ts): a list page and the change feed's first page under
 *    autocannon, req/s, p99, CPU per request;
 * 3. the spans each run left in Jaeger (the collector's counter, and one trace read back), so "on"
 *    is known to be on and "off" to be off.
 * Modes alternate in order over the rounds (parts/tracing-modes.ts). Needs the stack for step 1
 * (bash dev-world/stack/stack.sh up) and Jaeger ($PDA_JAEGER_BIN, else built by scripts/lib/jaeger.sh).
 * Writes bench/results/tracing-cost-<date>.md and prints it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Jaeger, startJaeger } from '@pda/dev-world/jaeger';
import { loadAvscTypes } from '@pda/ingest';
import { Kafka, logLevel } from 'kafkajs';
import { listFixture } from '../shared/api-fixture.ts';
import { MIX } from '../shared/change-mix.ts';
import { codeState, machine } from '../shared/machine.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { kafkaBrokers } from '../shared/stack-env.ts';
import { throughputEvents } from '../shared/throughput-events.ts';
import { createDataTopics, fillTopics } from '../shared/topic-fill.ts';
import { type ApiRun, runApi } from './parts/tracing-api.ts';
import { type IngestRun, runIngest } from './parts/tracing-ingest.ts';
import { roundOrder } from './parts/tracing-modes.ts';
import { renderTracingReport, spanProblems } from './parts/tracing-report.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    events: { type: 'string', default: '150000' },
    companies: { type: 'string', default: '300' },
    sites: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    'skip-ingest': { type: 'boolean', default: false },
    'skip-api': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const events = Number(args.events);
const companies = Number(args.companies);
const sites = Number(args.sites);
const rounds = Number(args.rounds);
const load = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration),
  warmupSeconds: Number(args.warmup),
};
if (
  ![events, companies, sites, rounds, load.connections, load.durationSeconds].every(
    (n) => Number.isInteger(n) && n > 0,
  ) ||
  events <= companies
)
  throw new Error(
    '--events (> --companies), --companies, --sites, --rounds, --connections, --duration: positive integers',
  );

const log = (line: string) => process.stderr.write(`tracing-cost: ${line}\n`);
const orders = roundOrder(rounds);
const inlineSchema = true;

async function measureIngest(jaeger: Jaeger): Promise<{ runs: IngestRun[]; averageMessageBytes: number }> {
  const prefix = `benchtrace${Date.now()}`;
  const kafka = new Kafka({ clientId: 'bench-tracing', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  const topics = ['companies', ...MIX.map(([t]) => t)].map((t) => `${prefix}.public.${t}`);
  try {
    await createDataTopics(admin, topics);
    log(`filling ${events} events`);
    const bytes = await fillTopics(kafka, throughputEvents(prefix, { events, companies, inlineSchema }));
    const avscTypes = await loadAvscTypes();
    const runs: IngestRun[] = [];
    for (const [round, order] of orders.entries()) {
      for (const mode of order) {
        log(`ingest, round ${round}, traces ${mode.name}`);
        runs.push(await runIngest({ prefix, events, avscTypes, receiver: jaeger }, mode, round));
      }
    }
    return { runs, averageMessageBytes: Math.round(bytes / events) };
  } finally {
    // Also the control topics the workers' subscriptions made the broker auto-create.
    const created = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    await admin.deleteTopics({ topics: [...new Set([...topics, ...created])] }).catch(() => {});
    await admin.disconnect();
  }
}

async function measureApi(jaeger: Jaeger): Promise<ApiRun[]> {
  // A fixture of its own in a temporary directory, built each run (the cached ones under .data/
  // belong to the api benchmarks).
  const root = mkdtempSync(join(tmpdir(), 'bench-tracing-api-'));
  try {
    log(`api fixture of ${sites} sites`);
    const fixture = listFixture(root, sites);
    const runs: ApiRun[] = [];
    for (const [round, order] of orders.entries()) {
      for (const mode of order) {
        log(`api, round ${round}, traces ${mode.name}`);
        runs.push(await runApi({ fixture, load, receiver: jaeger }, mode, round));
      }
    }
    return runs;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const loadAtStart = loadavg();
const code = codeState(repoRoot);
const jaeger = await startJaeger();
try {
  const ingest = args['skip-ingest'] ? { runs: [], averageMessageBytes: 0 } : await measureIngest(jaeger);
  const api = args['skip-api'] ? [] : await measureApi(jaeger);
  const date = new Date().toISOString().slice(0, 10);
  const report = renderTracingReport(
    {
      date,
      command: `node pipeline/tracing-cost.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: machine(loadAtStart, 'inherited'),
      code,
      ingest: {
        events,
        companies,
        format: 'JsonConverter with inline schemas',
        averageMessageBytes: ingest.averageMessageBytes,
      },
      api: { sites, ...load },
      orders,
    },
    ingest.runs,
    api,
  );
  mkdirSync(resultsDir, { recursive: true });
  const out = args.out ?? join(resultsDir, `tracing-cost-${date}.md`);
  writeFileSync(out, report);
  process.stdout.write(report);
  log(`written to ${out}`);
  const problems = spanProblems(ingest.runs, api);
  if (problems.length > 0) throw new Error(`spans: ${problems.join('; ')}`);
} finally {
  await jaeger.stop();
}
// The kafkajs and autocannon clients may keep timers alive after their work: the run is done.
process.exit(0);
