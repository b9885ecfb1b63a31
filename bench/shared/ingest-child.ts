/**
 * The ingest worker of tenants/fanout.ts in a process of its own, so its descriptors and memory
 * can be read from /proc (and capped with prlimit) apart from the benchmark's.
 *
 *   node shared/ingest-child.ts --group G --prefix P --data-dir D --expect N --data-tables a,b
 *
 * Speaks to the parent in stdout lines starting with `FANOUT ` (JSON): `progress` every second,
 * `done` once N events are handled (then it keeps the worker running, files open, until SIGTERM),
 * `stopped` after the drain, `failed` if the worker fails. Other stdout lines are the worker's log.
 */
import { parseArgs } from 'node:util';
import { loadAvscTypes } from '@pda/ingest';
import { benchWorker } from './ingest-worker.ts';

const { values: args } = parseArgs({
  options: {
    group: { type: 'string' },
    prefix: { type: 'string' },
    'data-dir': { type: 'string' },
    expect: { type: 'string' },
    'data-tables': { type: 'string' },
    companies: { type: 'string' },
  },
});
const { group, prefix } = args;
const dataDir = args['data-dir'];
const expected = Number(args.expect);
const dataTables = new Set((args['data-tables'] ?? '').split(',').filter(Boolean));
/** Every company has a file once the writer opened this many (0: not tracked). */
const companies = Number(args.companies ?? 0);
if (!group || !prefix || !dataDir || !(expected > 0) || dataTables.size === 0) {
  throw new Error('--group, --prefix, --data-dir, --expect and --data-tables are required');
}

const say = (message: Record<string, unknown>) => process.stdout.write(`FANOUT ${JSON.stringify(message)}\n`);

// INGEST_* variables of this process's environment reach the worker (runIngest's `ingestEnv`).
const ingestEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    (entry): entry is [string, string] => entry[0].startsWith('INGEST_') && entry[1] !== undefined,
  ),
);
const { worker, metrics } = benchWorker({
  groupId: group,
  topicPrefix: prefix,
  dataDir,
  avscTypes: await loadAvscTypes(),
  env: ingestEnv,
});

/** Events handled (any outcome), of which data events (the tenant tables), and per outcome. */
async function counts() {
  let all = 0;
  let data = 0;
  const outcomes: Record<string, number> = {};
  for (const v of (await metrics.events.get()).values) {
    all += v.value;
    if (dataTables.has(String(v.labels.table))) data += v.value;
    const outcome = String(v.labels.outcome);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + v.value;
  }
  return { all, data, outcomes };
}

/** The writer cache's metrics, when this version of ingest has them (pda_ingest_*company_files*). */
async function fileCacheMetrics() {
  const found: Record<string, number> = {};
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    if (!metric.name.includes('company_files')) continue;
    found[metric.name.replace(/^pda_ingest_/, '')] = metric.values.reduce((sum, v) => sum + v.value, 0);
  }
  return found;
}

let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
  worker.stop();
});
const startAt = performance.now();
const running = worker.run().then(
  () => {
    say({ type: 'stopped' });
    process.exit(0);
  },
  (error: unknown) => {
    say({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  },
);

// Steady rate as ingest/throughput.ts measures it: from the first applied chunk on.
let first: { at: number; all: number; data: number } | undefined;
// The rate of changes to companies that already have their file: from the moment the writer has
// opened every company's file (creating a file costs ~2 ms once; a fresh data directory pays it
// for every company inside the steady window).
let everyFileOpen: { at: number; data: number } | undefined;
let lastProgress = startAt;
for (;;) {
  await new Promise((resolve) => setTimeout(resolve, 25));
  if (stopping) break;
  const now = performance.now();
  const c = await counts();
  if (!first && c.all > 0) first = { at: now, all: c.all, data: c.data };
  if (
    !everyFileOpen &&
    companies > 0 &&
    ((await fileCacheMetrics()).company_files_opened_total ?? 0) >= companies
  ) {
    everyFileOpen = { at: now, data: c.data };
  }
  if (c.all >= expected && first) {
    const steadySeconds = (now - first.at) / 1000;
    const applyCalls =
      (await metrics.batchDuration.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
    say({
      type: 'done',
      events: c.all,
      dataEvents: c.data,
      outcomes: c.outcomes,
      seconds: (now - startAt) / 1000,
      startupSeconds: (first.at - startAt) / 1000,
      steadySeconds,
      steadyDataEventsPerSecond: steadySeconds > 0 ? (c.data - first.data) / steadySeconds : null,
      steadyEventsPerSecond: steadySeconds > 0 ? (c.all - first.all) / steadySeconds : null,
      // Null when fewer than a tenth of the data events came after every file was open.
      everyFileOpenDataEventsPerSecond:
        everyFileOpen && c.data - everyFileOpen.data >= c.data / 10 && now > everyFileOpen.at
          ? (c.data - everyFileOpen.data) / ((now - everyFileOpen.at) / 1000)
          : null,
      applyCalls,
      fileCache: await fileCacheMetrics(),
    });
    break;
  }
  if (now - lastProgress >= 1000) {
    lastProgress = now;
    say({ type: 'progress', events: c.all, dataEvents: c.data, seconds: (now - startAt) / 1000 });
  }
}
await running;
