/**
 * The tracing cost benchmark's result document (pipeline/tracing-cost.ts → bench/results/
 * tracing-cost-<date>.md): per mode the mean over the rounds, its ratio to "off", every round's
 * figures, and the spans the receiver got with one trace's span names as proof they are real.
 */
import type { CodeState, Machine } from '../../shared/machine.ts';
import type { ApiRun } from './tracing-api.ts';
import type { IngestRun } from './tracing-ingest.ts';
import { TRACING_MODES, type TracingMode } from './tracing-modes.ts';

export interface TracingReportInputs {
  readonly date: string;
  readonly command: string;
  readonly machine: Machine;
  readonly code: CodeState;
  readonly ingest: {
    readonly events: number;
    readonly companies: number;
    readonly format: string;
    readonly averageMessageBytes: number;
  };
  readonly api: {
    readonly sites: number;
    readonly connections: number;
    readonly durationSeconds: number;
    readonly warmupSeconds: number;
  };
  readonly orders: readonly (readonly TracingMode[])[];
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((sum, v) => sum + v, 0) / values.length;
const int = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '–');
const one = (x: number) => (Number.isFinite(x) ? (Math.round(x * 10) / 10).toString() : '–');
/** Whole above 100, one decimal below: an expected count of 0.2 traces says as much as 30,366. */
const count = (x: number) => (x >= 100 ? int(x) : one(x));
const ratio = (x: number, off: number) =>
  Number.isFinite(x) && Number.isFinite(off) && off > 0 ? `${(x / off).toFixed(2)}×` : '–';
/** Mean with the rounds' range, e.g. `31,200 (30,100–32,300)`. */
const spread = (values: readonly number[], format: (x: number) => string) =>
  values.length > 1
    ? `${format(mean(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`
    : format(mean(values));

interface ModeSummary {
  readonly mode: TracingMode['name'];
  readonly ingestEventsPerSecond: readonly number[];
  readonly ingestCpuUsPerEvent: readonly number[];
  readonly listRps: readonly number[];
  readonly listP99: readonly number[];
  readonly listCpuUs: readonly number[];
  readonly feedRps: readonly number[];
  readonly feedP99: readonly number[];
  readonly feedCpuUs: readonly number[];
  readonly ingestSpans: readonly number[];
  readonly apiSpans: readonly number[];
}

function summarize(
  mode: TracingMode['name'],
  ingest: readonly IngestRun[],
  api: readonly ApiRun[],
): ModeSummary {
  const i = ingest.filter((run) => run.mode === mode);
  const a = api.filter((run) => run.mode === mode);
  return {
    mode,
    ingestEventsPerSecond: i.map((run) => run.steadyEventsPerSecond ?? Number.NaN),
    ingestCpuUsPerEvent: i.map((run) => run.cpuUsPerEvent),
    listRps: a.map((run) => run.list.requestsPerSecond),
    listP99: a.map((run) => run.list.p99Ms),
    listCpuUs: a.map((run) => run.list.cpuUsPerRequest),
    feedRps: a.map((run) => run.feed.requestsPerSecond),
    feedP99: a.map((run) => run.feed.p99Ms),
    feedCpuUs: a.map((run) => run.feed.cpuUsPerRequest),
    ingestSpans: i.map((run) => run.spansReceived),
    apiSpans: a.map((run) => run.spansReceived),
  };
}

/** Traces a run should have kept: one per apply call (ingest) or request (api), times the ratio. */
const expectedTraces = (mode: TracingMode['name'], units: number) =>
  (TRACING_MODES.find((m) => m.name === mode)?.ratio ?? 0) * units;

/**
 * The run's own check of each deployable: "off" sent no span, and an "on" run whose ratio should
 * have kept a few traces (3 or more expected) sent some. Ingest traces an apply call, not an event:
 * a short run makes a few dozen calls, so at 1 % it may rightly keep none.
 */
export function spanProblems(ingest: readonly IngestRun[], api: readonly ApiRun[]): string[] {
  const runs = [
    ...ingest.map((r) => ({ ...r, what: 'ingest', units: r.applyCalls })),
    ...api.map((r) => ({ ...r, what: 'api', units: r.requests })),
  ];
  const problems: string[] = [];
  for (const run of runs) {
    if (run.mode === 'off' && run.spansReceived > 0)
      problems.push(`${run.what} off round ${run.round}: ${run.spansReceived} spans arrived`);
    if (run.mode !== 'off' && run.spansReceived === 0 && expectedTraces(run.mode, run.units) >= 3)
      problems.push(`${run.what} ${run.mode} round ${run.round}: no span arrived`);
  }
  return problems;
}

export function renderTracingReport(
  inputs: TracingReportInputs,
  ingest: readonly IngestRun[],
  api: readonly ApiRun[],
): string {
  const m = inputs.machine;
  const summaries = TRACING_MODES.map((mode) => summarize(mode.name, ingest, api));
  const off = summaries[0] as ModeSummary;
  const rounds = inputs.orders.length;
  const problems = spanProblems(ingest, api);
  const lines = [
    `# tracing cost — ${inputs.date}`,
    '',
    `Run with \`${inputs.command}\` (bench/README.md, "tracing cost"). Not a test. Issue 37 item 1: what`,
    'traces cost each deployable, off, on at 1 % (`OTEL_TRACES_SAMPLER=traceidratio`, `OTEL_TRACES_SAMPLER_ARG=0.01`)',
    'and on at 100 % (`always_on`), exporting over OTLP/HTTP to a real Jaeger on the same machine.',
    '',
    `**Machine:** ${m.cpu}, ${m.cores} cores, ${m.memoryGb} GiB RAM, Linux ${m.kernel}, Node ${m.node};`,
    `load average (1, 5, 15 min) ${m.loadAverage.start.join(', ')} at the start, ${m.loadAverage.end.join(', ')} at the end.`,
    `Code: ${inputs.code.commit}${inputs.code.uncommitted.length > 0 ? ` with uncommitted changes to ${inputs.code.uncommitted.join(', ')}` : ''}.`,
    'Jaeger (the receiver) runs on the same 2 cores: its CPU is reported apart, a production collector runs elsewhere.',
    '',
    `**Inputs:** ingest: ${inputs.ingest.events.toLocaleString('en-US')} events over ${inputs.ingest.companies} companies`,
    `(${inputs.ingest.format}, ${inputs.ingest.averageMessageBytes} bytes a message on average; shared/throughput-events.ts),`,
    "filled once into fresh topics of the stack's Kafka; each run is the real worker from a new consumer group into a fresh",
    "data directory, in this process; events/s steady from the first applied chunk; CPU per event is this process's (both",
    `threads, the exporter included). api: one company of ${inputs.api.sites.toLocaleString('en-US')} sites (shared/api-fixture.ts),`,
    'a new api process (api/src/main.ts, its tracing from the OTEL_* variables) per run; autocannon with',
    `${inputs.api.connections} connections, ${inputs.api.warmupSeconds} s warm-up then ${inputs.api.durationSeconds} s, on \`GET /v1/sites?limit=50\``,
    "and `GET /v1/changes?limit=50`; CPU per request is the api process's.",
    `${rounds} round${rounds === 1 ? '' : 's'}, the modes in the order ${inputs.orders.map((order) => order.map((mode) => mode.name).join(' → ')).join('; then ')}`,
    '(every other round reversed, so a drift of the shared machine does not fall on one mode).',
    '',
    `## The table (mean of ${rounds} round${rounds === 1 ? '' : 's'}, range in brackets)`,
    '',
    '| mode | ingest events/s | ingest µs CPU/event | api list req/s | list p99 ms | api feed req/s | feed p99 ms | api µs CPU/req list · feed | spans received ingest · api |',
    '|---|---|---|---|---|---|---|---|---|',
    ...summaries.map(
      (s) =>
        `| ${s.mode} | ${spread(s.ingestEventsPerSecond, int)} | ${spread(s.ingestCpuUsPerEvent, one)} | ${spread(s.listRps, int)} | ${spread(s.listP99, one)} | ${spread(s.feedRps, int)} | ${spread(s.feedP99, one)} | ${spread(s.listCpuUs, int)} · ${spread(s.feedCpuUs, int)} | ${int(mean(s.ingestSpans))} · ${int(mean(s.apiSpans))} |`,
    ),
    '',
    '## Ratio to "off" (means)',
    '',
    '| mode | ingest events/s | ingest CPU/event | list req/s | list p99 | list CPU/req | feed req/s | feed p99 | feed CPU/req |',
    '|---|---|---|---|---|---|---|---|---|',
    ...summaries
      .slice(1)
      .map(
        (s) =>
          `| ${s.mode} | ${ratio(mean(s.ingestEventsPerSecond), mean(off.ingestEventsPerSecond))} | ${ratio(mean(s.ingestCpuUsPerEvent), mean(off.ingestCpuUsPerEvent))} | ${ratio(mean(s.listRps), mean(off.listRps))} | ${ratio(mean(s.listP99), mean(off.listP99))} | ${ratio(mean(s.listCpuUs), mean(off.listCpuUs))} | ${ratio(mean(s.feedRps), mean(off.feedRps))} | ${ratio(mean(s.feedP99), mean(off.feedP99))} | ${ratio(mean(s.feedCpuUs), mean(off.feedCpuUs))} |`,
      ),
    '',
    '## Spans in Jaeger',
    '',
    problems.length === 0
      ? 'The "off" runs sent no span, and every "on" run that should have kept 3 traces or more sent spans (counted by the collector\'s own counter of spans stored, per run; "traces expected" is the ratio × apply calls or requests).'
      : `**Check failed:** ${problems.join('; ')}.`,
    '',
    '| deployable | mode | round | spans received | traces expected | per apply call / per request | receiver CPU s | one trace read back (span names) |',
    '|---|---|---|---|---|---|---|---|',
    ...ingest.map(
      (run) =>
        `| ingest | ${run.mode} | ${run.round} | ${int(run.spansReceived)} | ${count(expectedTraces(run.mode, run.applyCalls))} | ${run.applyCalls > 0 ? (run.spansReceived / run.applyCalls).toFixed(2) : '–'} of ${run.applyCalls} calls | ${run.receiverCpuSeconds} | ${run.sampleTrace.join(', ') || '–'} |`,
    ),
    ...api.map(
      (run) =>
        `| api | ${run.mode} | ${run.round} | ${int(run.spansReceived)} | ${count(expectedTraces(run.mode, run.requests))} | ${run.requests > 0 ? (run.spansReceived / run.requests).toFixed(3) : '–'} of ${int(run.requests)} requests | ${run.receiverCpuSeconds} | ${run.sampleTrace.join(', ') || '–'} |`,
    ),
    '',
    '## Every round',
    '',
    '| round | mode | ingest events/s | ingest s | µs CPU/event | list req/s | list p99 | list µs CPU/req | feed req/s | feed p99 | feed µs CPU/req | non-2xx · errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...inputs.orders.flatMap((order, round) =>
      order.map((mode) => {
        const i = ingest.find((run) => run.round === round && run.mode === mode.name);
        const a = api.find((run) => run.round === round && run.mode === mode.name);
        return `| ${round} | ${mode.name} | ${int(i?.steadyEventsPerSecond ?? Number.NaN)} | ${i?.seconds ?? '–'} | ${i?.cpuUsPerEvent ?? '–'} | ${int(a?.list.requestsPerSecond ?? Number.NaN)} | ${a?.list.p99Ms ?? '–'} | ${int(a?.list.cpuUsPerRequest ?? Number.NaN)} | ${int(a?.feed.requestsPerSecond ?? Number.NaN)} | ${a?.feed.p99Ms ?? '–'} | ${int(a?.feed.cpuUsPerRequest ?? Number.NaN)} | ${a ? `${a.list.non2xx + a.feed.non2xx} · ${a.list.errors + a.feed.errors}` : '–'} |`;
      }),
    ),
    '',
  ];
  return lines.join('\n');
}
