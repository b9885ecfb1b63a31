/**
 * Writers split by company (docs/scaling.md, "Split the writer by company"): the aggregate ingest
 * rate of one writer holding every partition and of two writers holding half each, on the same
 * partitioned topics, in the same run.
 *
 *   pnpm --filter @pda/bench exec node ingest/writers.ts [--companies 100] [--events 200000] [--partitions 4]
 *     [--rounds 2]
 *
 * On the running stack's Kafka: fresh topics, the six tenant topics with --partitions partitions and
 * the control topics with one, filled with real-shaped Debezium events (shared/tenant-events.ts:
 * the companies, a key granting them all, then the table mix over the companies, uniform), each on
 * its company's partition as PartitionRouting puts it (`companyPartition`). Then, alternately for
 * --rounds rounds:
 *   one: a writer whose ownership file gives it every partition;
 *   two: writers "a" (even partitions) and "b" (odd) at once, each in its own process, group and
 *        data directory, each expecting the control events plus its companies' events.
 * Each writer is the real worker in a child process (shared/run-ingest.ts). The aggregate rate is
 * every data event ÷ the slower writer's seconds (process start included); per writer: its events,
 * seconds, events/s and CPU seconds. On a 2-core machine shared with the broker the two writers
 * share the same cores, so the gain is bounded by the machine: the report says so.
 * Prints one JSON document on stdout; writes bench/results/writers-<date>.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newKeyMaterial } from '@pda/operator-tools/keys';
import { companyPartition } from '@pda/projections/model';
import { Kafka, logLevel } from 'kafkajs';
import { codeState, machine } from '../shared/machine.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { type IngestResult, runIngest } from '../shared/run-ingest.ts';
import { kafkaBrokers } from '../shared/stack-env.ts';
import {
  CASE_TABLES,
  type CaseEvents,
  caseEvents,
  DATA_TABLES,
  setupEventCount,
} from '../shared/tenant-events.ts';
import { createDataTopics, fillTopics } from '../shared/topic-fill.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    companies: { type: 'string', default: '100' },
    events: { type: 'string', default: '200000' },
    partitions: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
  },
});
const companies = Number(args.companies);
const dataEvents = Number(args.events);
const partitions = Number(args.partitions);
const rounds = Number(args.rounds);
for (const [name, value, min] of [
  ['companies', companies, 2],
  ['events', dataEvents, 1000],
  ['partitions', partitions, 2],
  ['rounds', rounds, 1],
] as const) {
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name}: an integer ≥ ${min}`);
}

const log = (line: string) => process.stderr.write(`writers: ${line}\n`);
const round2 = (x: number) => Math.round(x * 100) / 100;
const runId = randomUUID().slice(0, 8);
const prefix = `writers${runId}`;
const kafka = new Kafka({ clientId: 'bench-writers', brokers: kafkaBrokers(), logLevel: logLevel.ERROR });
const admin = kafka.admin();
const topics = CASE_TABLES.map((table) => `${prefix}.public.${table}`);
const tenantTopics = new Set(DATA_TABLES.map((table) => `${prefix}.public.${table}`));
const scratch = mkdtempSync(join(tmpdir(), 'bench-writers-'));

/** The company of an event of a tenant topic (its `after`, or `before` for a delete). */
function companyOf(value: string): string {
  const payload = (
    JSON.parse(value) as { payload: { after?: { company_id?: string }; before?: { company_id?: string } } }
  ).payload;
  const company = payload.after?.company_id ?? payload.before?.company_id;
  if (typeof company !== 'string') throw new Error('a tenant event without company_id');
  return company;
}

interface Writer {
  readonly name: string;
  readonly serves: readonly number[];
}

function ownershipFile(label: string, writers: readonly Writer[]): string {
  const file = join(scratch, `${label}.json`);
  const content = {
    partitions,
    writers: writers.map((w, i) => ({
      name: w.name,
      api: `http://127.0.0.1:${10_000 + i}`,
      serves: w.serves,
    })),
  };
  writeFileSync(file, JSON.stringify(content, null, 2));
  return file;
}

interface WriterRun {
  readonly name: string;
  readonly partitions: readonly number[];
  readonly expectedEvents: number;
  readonly dataEvents: number;
  readonly seconds: number | null;
  /** From the process start to its first applied chunk (group join, first fetch). */
  readonly startupSeconds: number | null;
  readonly eventsPerSecond: number | null;
  readonly cpuSeconds: number | null;
  readonly failure: string | null;
}

async function runWriters(label: string, writers: readonly Writer[], eventsByPartition: readonly number[]) {
  const file = ownershipFile(label, writers);
  const setup = setupEventCount(companies);
  const runs = await Promise.all(
    writers.map(async (writer): Promise<WriterRun> => {
      const dataDir = mkdtempSync(join(scratch, `${label}-${writer.name}-`));
      const mine = writer.serves.reduce((sum, p) => sum + (eventsByPartition[p] ?? 0), 0);
      const result: IngestResult = await runIngest({
        groupId: `${prefix}-${label}-${writer.name}-${randomUUID().slice(0, 6)}`,
        topicPrefix: prefix,
        dataDir,
        expectedEvents: setup + mine,
        dataTables: DATA_TABLES,
        companies: 0,
        launcher: [],
        stallSeconds: 60,
        ingestEnv: { INGEST_OWNERSHIP_FILE: file, INGEST_WRITER_NAME: writer.name },
      });
      rmSync(dataDir, { recursive: true, force: true });
      return {
        name: writer.name,
        partitions: writer.serves,
        expectedEvents: setup + mine,
        dataEvents: mine,
        seconds: result.seconds,
        startupSeconds: result.startupSeconds,
        eventsPerSecond: result.seconds ? Math.round(mine / result.seconds) : null,
        cpuSeconds: result.process?.cpuSeconds ?? null,
        failure: result.failure,
      };
    }),
  );
  const slowest = Math.max(...runs.map((r) => r.seconds ?? Number.NaN));
  // Both start together: from the first writer's first applied chunk to the last writer's end.
  const applying = slowest - Math.min(...runs.map((r) => r.startupSeconds ?? Number.NaN));
  const total = runs.reduce((sum, r) => sum + r.dataEvents, 0);
  const cpu = runs.reduce((sum, r) => sum + (r.cpuSeconds ?? Number.NaN), 0);
  return {
    label,
    writers: runs,
    seconds: round2(slowest),
    aggregateEventsPerSecond: Number.isFinite(slowest) ? Math.round(total / slowest) : null,
    aggregateApplyingEventsPerSecond: Number.isFinite(applying) ? Math.round(total / applying) : null,
    cpuMicrosPerEvent: Number.isFinite(cpu) ? Math.round((cpu * 1e6) / total) : null,
    loadAverage: loadavg().map(round2),
  };
}

function renderReport(document: Record<string, unknown>, results: Awaited<ReturnType<typeof runWriters>>[]) {
  const m = document.machine as ReturnType<typeof machine>;
  const lines = [
    `# Writers split by company — ${document.date}`,
    '',
    `Command: \`${document.command}\``,
    '',
    `Machine: ${m.cores} cores (${m.cpu}), ${m.memoryGb} GiB, Node ${m.node}; load average ${m.loadAverage.start[0]} at the start, ${m.loadAverage.end[0]} at the end. The Kafka broker, Connect and the writers share these cores.`,
    '',
    `Inputs: ${companies} companies, ${dataEvents} data events (tenant-fanout's table mix, uniform) plus ${setupEventCount(companies)} control events, tenant topics of ${partitions} partitions routed by company; ${rounds} rounds, alternating.`,
    '',
    '| round | writers | seconds (slowest) | aggregate events/s | aggregate, from the first applied chunk | per writer: partitions, events, s (startup), events/s, CPU s | CPU µs/event summed |',
    '|---|---|---:|---:|---:|---|---:|',
  ];
  for (const [i, r] of results.entries()) {
    const per = r.writers
      .map(
        (w) =>
          `${w.name}: [${w.partitions.join(',')}], ${w.dataEvents}, ${w.seconds ?? '—'} s (${w.startupSeconds ?? '—'}), ${w.eventsPerSecond ?? '—'}/s, ${w.cpuSeconds ?? '—'} CPU s${w.failure ? ` (${w.failure})` : ''}`,
      )
      .join('; ');
    lines.push(
      `| ${Math.floor(i / 2) + 1} | ${r.label} | ${r.seconds} | ${r.aggregateEventsPerSecond ?? '—'} | ${r.aggregateApplyingEventsPerSecond ?? '—'} | ${per} | ${r.cpuMicrosPerEvent ?? '—'} |`,
    );
  }
  lines.push(
    '',
    "Seconds are from each writer process's start (group join and first fetch included) until it has handled every event of its partitions. Two writers on one 2-core machine share the cores with each other and with the broker: the aggregate rate shows what splitting costs and gains here, not what two machines would do (each writer's own rate is the figure for a machine of its own).",
    '',
  );
  return lines.join('\n');
}

async function main() {
  const loadStart = loadavg();
  const code = codeState(repoRoot);
  await admin.connect();
  try {
    await createDataTopics(admin, topics, (topic) => (tenantTopics.has(topic) ? partitions : 1));
    const eventsByPartition = new Array<number>(partitions).fill(0);
    const partitionOf = (event: { topic: string; value: string }) => {
      if (!tenantTopics.has(event.topic)) return 0;
      const p = companyPartition(companyOf(event.value), partitions);
      eventsByPartition[p] = (eventsByPartition[p] ?? 0) + 1;
      return p;
    };
    const key = newKeyMaterial();
    const events = caseEvents({
      topicPrefix: prefix,
      companies,
      spread: 'uniform',
      dataEvents,
      key,
      keyId: randomUUID(),
    } satisfies CaseEvents);
    const fillStart = performance.now();
    await fillTopics(kafka, events, { partitionOf });
    log(
      `filled in ${round2((performance.now() - fillStart) / 1000)} s; events per partition ${eventsByPartition.join(', ')}`,
    );

    const all = Array.from({ length: partitions }, (_, p) => p);
    const one: Writer[] = [{ name: 'a', serves: all }];
    const two: Writer[] = [
      { name: 'a', serves: all.filter((p) => p % 2 === 0) },
      { name: 'b', serves: all.filter((p) => p % 2 === 1) },
    ];
    const results = [];
    for (let r = 0; r < rounds; r++) {
      for (const [label, writers] of [
        ['one writer', one],
        ['two writers', two],
      ] as const) {
        const result = await runWriters(label.replace(' ', '-'), writers, eventsByPartition);
        log(`${label}: ${result.aggregateEventsPerSecond}/s in ${result.seconds} s`);
        results.push({ ...result, label });
      }
    }
    const date = new Date().toISOString().slice(0, 10);
    const document = {
      date,
      command: `node bench/ingest/writers.ts ${process.argv.slice(2).join(' ')}`.trim(),
      machine: machine(loadStart, 'inherited'),
      code,
      inputs: { companies, dataEvents, partitions, rounds, eventsByPartition },
      results,
    };
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    const dir = resultsDir;
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `writers-${date}.md`);
    writeFileSync(file, renderReport(document, results));
    log(`report: ${file}`);
  } finally {
    await admin.deleteTopics({ topics }).catch(() => {});
    await admin.disconnect();
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
