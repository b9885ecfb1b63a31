/**
 * The since-page benchmark's result document (bench/results/api-since-<date>.md): machine, inputs,
 * and the tables of bench/api-since.ts, each filtered page next to its unfiltered peer.
 */
import { loadavg } from 'node:os';
import { changedPlanMax } from '@pda/projections/read';
import type { Measurement } from './api-measure.ts';
import { machine } from './api-report.ts';
import type { HttpRow } from './api-since-http.ts';
import type { CrossoverRow, DeletionsRow, PageRow } from './api-since-pages.ts';

export interface SinceReport {
  readonly date: string;
  readonly commit: string;
  readonly sites: number;
  readonly loadBefore: number;
  readonly inputs: readonly string[];
  readonly pages: readonly PageRow[];
  readonly clustered: readonly PageRow[];
  readonly deletions: readonly DeletionsRow[];
  readonly crossovers: readonly CrossoverRow[];
  readonly http: readonly HttpRow[];
  readonly throughput: readonly { sort: string; matching: number; row: Measurement; peer: Measurement }[];
  readonly notes: readonly string[];
}

const n = (value: number) => value.toLocaleString('en-US');
const times = (value: number, peer: number) => `${(value / peer).toFixed(value / peer >= 10 ? 0 : 1)}×`;
const matchingLabel = (matching: number | undefined, sites: number) =>
  matching === undefined
    ? 'unfiltered'
    : matching === sites
      ? `all (${n(matching)})`
      : `${n(matching)}${matching >= sites / 100 ? ` (${Math.round((matching / sites) * 100)} %)` : ''}`;

function pageTable(rows: readonly PageRow[], sites: number): string[] {
  return [
    '| sort | matching | page | rows | plan | unfiltered µs | before µs | before × | after µs | after × |',
    '|---|---:|---|---:|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.sort} | ${matchingLabel(row.matching, sites)} | ${row.page} | ${row.rows} | ${row.plan} | ${n(row.unfilteredUs)} | ${
          row.beforeUs === undefined ? '' : n(row.beforeUs)
        } | ${row.beforeUs === undefined ? '' : times(row.beforeUs, row.unfilteredUs)} | ${n(row.afterUs)} | **${times(row.afterUs, row.unfilteredUs)}** |`,
    ),
  ];
}

export function renderSinceReport(report: SinceReport): string {
  const { sites } = report;
  const apis = [...new Set(report.http.map((row) => row.api))];
  const keys = [
    ...new Map(report.http.map((row) => [`${row.sort}|${row.matching}|${row.page}`, row])).values(),
  ];
  const httpTable = [
    `| sort | matching | page | rows | ${apis.map((api) => `${api}: ms | unfiltered ms | ×`).join(' | ')} |`,
    `|---|---:|---|---:|${apis.map(() => '---:|---:|---:').join('|')}|`,
    ...keys.map((key) => {
      const cells = apis.map((api) => {
        const row = report.http.find(
          (r) => r.api === api && r.sort === key.sort && r.page === key.page && r.matching === key.matching,
        );
        if (!row || row.peerMs === undefined) return ' |  | ';
        return `${row.medianMs} | ${row.peerMs} | **${times(row.medianMs, row.peerMs)}**`;
      });
      return `| ${key.sort} | ${matchingLabel(key.matching, sites)} | ${key.page} | ${key.rows} | ${cells.join(' | ')} |`;
    }),
  ];
  const throughput = [
    '| sort | matching | req/s | unfiltered req/s | × | p50 ms | p99 ms | non-2xx + errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...report.throughput.map(
      ({ sort, matching, row, peer }) =>
        `| ${sort} | ${matchingLabel(matching, sites)} | ${n(row.requestsPerSecond)} | ${n(peer.requestsPerSecond)} | ${
          peer.requestsPerSecond > 0 ? (row.requestsPerSecond / peer.requestsPerSecond).toFixed(2) : ''
        } | ${row.p50Ms} | ${row.p99Ms} | ${row.non2xx + row.errors + peer.non2xx + peer.errors} |`,
    ),
  ];
  return [
    `# Since-pages: api-since ${report.date}`,
    '',
    `**Machine:** ${machine()}; 1-minute load average ${report.loadBefore.toFixed(2)} when the measurements started, ${(loadavg()[0] ?? 0).toFixed(2)} at the end. **Commit:** ${report.commit}.`,
    '',
    '**Inputs:**',
    ...report.inputs.map((line) => `- ${line}`),
    '',
    '## readPage: µs per 50-row page, shuffled change times',
    '',
    'Median of many calls in one read snapshot each, as the api reads. *unfiltered*: the same sort and depth without a since (the peer); *before*: the statement before the plans (bench/api-since-before.ts); *after*: readPage; ×: ÷ unfiltered.',
    '',
    ...pageTable(report.pages, sites),
    '',
    '## readPage: clustered change times (the newest rows changed: the end of created_at / updated_at order)',
    '',
    ...pageTable(report.clustered, sites),
    '',
    '## readPage: each plan forced around the thresholds (deep pages, shuffled)',
    '',
    `threshold (projections/src/read/since-plan.ts, changedPlanMax for pages of 50): id ${n(changedPlanMax(50, true))}, other sorts ${n(changedPlanMax(50, false))}. Each plan's µs (walk-since: its budgeted page, which may be short); *chosen*: what readPage takes.`,
    '',
    '| sort | matching | M / threshold | chosen | changed µs | walk-since µs |',
    '|---|---:|---:|---|---:|---:|',
    ...report.crossovers.map(
      (row) =>
        `| ${row.sort} | ${n(row.matching)} | ${(row.matching / changedPlanMax(50, row.sort.replace('-', '') === 'id')).toFixed(2)} | ${row.chosen} | ${[
          row.plans.changed,
          row.plans['walk-since'],
        ]
          .map((us) => (us === undefined ? '' : n(us)))
          .join(' | ')} |`,
    ),
    '',
    `## readDeletions: µs per 50-row page of the five resource tables`,
    '',
    'matching: sites tombstones at or after the since; as many site_contacts tombstones (not asked for) are interleaved with them.',
    '',
    '| matching | page | rows | before µs | after µs |',
    '|---:|---|---:|---:|---:|',
    ...report.deletions.map(
      (row) => `| ${n(row.matching)} | ${row.page} | ${row.rows} | ${n(row.beforeUs)} | ${n(row.afterUs)} |`,
    ),
    '',
    '## HTTP: GET /v1/sites, one request at a time (median ms)',
    '',
    "× is ÷ the same api's unfiltered page of the same sort and depth (its peer), requested in turn with it.",
    '',
    ...httpTable,
    '',
    '## HTTP: page 1 under load (autocannon, the api under test)',
    '',
    ...throughput,
    '',
    ...(report.notes.length > 0 ? ['## Notes', '', ...report.notes.map((note) => `- ${note}`), ''] : []),
  ].join('\n');
}
