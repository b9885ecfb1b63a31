/**
 * The result document of bench/api/followers.ts: the machine, the inputs, the api settings raised,
 * then per N and kind commit → follower latency, and per N what the api process cost. Pure (the
 * run's figures in, markdown out), held by bench/tests/followers-report.test.ts.
 */
import type { FollowerKind, LatencySummary } from './followers-plan.ts';

export interface KindResult {
  readonly kind: FollowerKind;
  readonly followers: number;
  readonly established: number;
  /** Marker arrivals expected at established followers that never came within the tail. */
  readonly missed: number;
  readonly latency: LatencySummary;
}

export interface CaseResult {
  readonly asked: number;
  readonly kinds: readonly KindResult[];
  readonly markers: number;
  readonly writeSeconds: number;
  readonly api: {
    readonly peakRssMb: number;
    readonly peakHeapUsedMb: number | null;
    readonly peakOpenFds: number;
    readonly peakHeldRequests: number | null;
    /** CPU seconds ÷ wall seconds over the write window: cores busy. */
    readonly cores: number;
  };
  readonly otherCores: Record<string, number>;
  /** The benchmark's own event-loop delay p99 over the window (the client side's share of the latency). */
  readonly benchLoopDelayP99Ms: number;
  readonly refusals: Record<string, number>;
  readonly clientErrors: Record<string, number>;
  readonly statuses: Record<string, number>;
}

const cell = (x: number | null) => (x === null ? '–' : x.toLocaleString('en-US'));
const pairs = (table: Record<string, number>) =>
  Object.entries(table)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n.toLocaleString('en-US')}`)
    .join(', ') || 'none';

export function latencyTable(cases: readonly CaseResult[]): string {
  const rows = cases.flatMap((c) =>
    c.kinds.map(
      (k) =>
        `| ${cell(c.asked)} | ${k.kind} | ${cell(k.followers)} | ${cell(k.established)} | ${cell(k.latency.samples)} | ${cell(k.missed)} | ${cell(k.latency.p50Ms)} | ${cell(k.latency.p99Ms)} | ${cell(k.latency.maxMs)} |`,
    ),
  );
  return [
    '| N | kind | followers | established | arrivals | missed | p50 ms | p99 ms | max ms |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

export function costTable(cases: readonly CaseResult[]): string {
  const rows = cases.map((c) => {
    const others = Object.entries(c.otherCores)
      .map(([name, cores]) => `${name} ${cores.toFixed(2)}`)
      .join(', ');
    return `| ${cell(c.asked)} | ${cell(c.api.peakRssMb)} | ${cell(c.api.peakHeapUsedMb)} | ${cell(c.api.peakOpenFds)} | ${cell(c.api.peakHeldRequests)} | ${c.api.cores.toFixed(2)} | ${others} | ${c.benchLoopDelayP99Ms.toFixed(1)} | ${pairs(c.refusals)} |`;
  });
  return [
    '| N | api RSS peak MB | api heap used peak MB | api open fds peak | held requests peak | api cores | other cores | bench loop delay p99 ms | api refusals |',
    '|---:|---:|---:|---:|---:|---:|---|---:|---|',
    ...rows,
  ].join('\n');
}

export function clientTable(cases: readonly CaseResult[]): string {
  return [
    '| N | answers by status | client socket errors |',
    '|---:|---|---|',
    ...cases.map((c) => `| ${cell(c.asked)} | ${pairs(c.statuses)} | ${pairs(c.clientErrors)} |`),
  ].join('\n');
}

export function renderReport(doc: {
  readonly date: string;
  readonly command: string;
  readonly machine: unknown;
  readonly inputs: unknown;
  readonly settings: unknown;
  readonly cases: readonly CaseResult[];
}): string {
  const json = (x: unknown) => ['```json', JSON.stringify(x, null, 2), '```'].join('\n');
  return [
    `# Many feed followers on one api process (${doc.date})`,
    '',
    `\`${doc.command}\` (bench/README.md, "api: many feed followers on one api process"). PostgreSQL commit → Debezium → Kafka → ingest (its own process) → company files → api (its own process) → the followers (this process).`,
    '',
    '## Machine',
    '',
    json(doc.machine),
    '',
    '## Inputs',
    '',
    json(doc.inputs),
    '',
    '## Api settings raised over the defaults (per N: the largest shown)',
    '',
    json(doc.settings),
    '',
    '## Commit → follower',
    '',
    latencyTable(doc.cases),
    '',
    '## What the api process cost (over the write window)',
    '',
    costTable(doc.cases),
    '',
    '## Answers the followers had',
    '',
    clientTable(doc.cases),
    '',
  ].join('\n');
}
