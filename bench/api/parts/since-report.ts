/**
 * The since-page benchmark's result document (bench/results/api-since-<date>.md): machine, inputs,
 * and the tables of bench/api/since.ts, each filtered page next to its unfiltered peer.
 */
import { loadavg } from 'node:os';
import { changedPlanMax } from '@pda/projections/read';
import type { Measurement } from '../../shared/api-measure.ts';
import { machine } from './report.ts';
import type { HttpRow } from './since-http.ts';
import type { CrossoverRow, DeletionsRow, PageRow, SidePage } from './since-pages.ts';
import type { WalkRow, WalkStats } from './since-walk.ts';

export interface SinceReport {
  readonly date: string;
  readonly commit: string;
  readonly sites: number;
  readonly loadBefore: number;
  readonly inputs: readonly string[];
  readonly pages: readonly PageRow[];
  readonly clustered: readonly PageRow[];
  readonly walks: readonly WalkRow[];
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
  const withBefore = rows.some((row) => row.before !== undefined);
  const side = (page: SidePage | undefined, bold: boolean) =>
    page === undefined
      ? ' |  |  |  |  | '
      : `${page.plan} | ${page.rows}${page.short ? ' short' : ''} | ${n(page.unfilteredUs)} | ${n(page.us)} | ${
          bold ? `**${times(page.us, page.unfilteredUs)}**` : times(page.us, page.unfilteredUs)
        }`;
  return [
    `| sort | matching | page | after: plan | rows | unfiltered µs | µs | × |${withBefore ? ' before: plan | rows | unfiltered µs | µs | × |' : ''}`,
    `|---|---:|---|---|---:|---:|---:|---:|${withBefore ? '---|---:|---:|---:|---:|' : ''}`,
    ...rows.map(
      (row) =>
        `| ${row.sort} | ${matchingLabel(row.matching, sites)} | ${row.page} | ${side(row.after, true)} |${
          withBefore ? ` ${side(row.before, false)} |` : ''
        }`,
    ),
  ];
}

const ms = (us: number) =>
  us >= 10_000 ? n(Math.round(us / 1000)) : (us / 1000).toFixed(us >= 1000 ? 1 : 2);

function walkTable(rows: readonly WalkRow[], sites: number): string[] {
  const withBefore = rows.some((row) => row.before !== undefined);
  const side = (walk: WalkStats | undefined, peerUs: number | undefined) =>
    walk === undefined || peerUs === undefined
      ? ' |  |  |  |  |  | '
      : `${n(walk.pages)} | ${n(walk.short)} | ${ms(walk.totalUs)} | ${n(walk.medianPageUs)} | ${n(walk.maxPageUs)} | ${times(walk.maxPageUs, peerUs)} | ${n(peerUs)}`;
  return [
    `| file | sort | matching | limit | after: pages | short | total ms | median page µs | max page µs | max × | unfiltered page µs |${
      withBefore
        ? ' before: pages | short | total ms | median page µs | max page µs | max × | unfiltered page µs | after total ÷ before |'
        : ''
    }`,
    `|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|${withBefore ? '---:|---:|---:|---:|---:|---:|---:|---:|' : ''}`,
    ...rows.map(
      (row) =>
        `| ${row.file} | ${row.sort} | ${matchingLabel(row.matching, sites)} | ${row.limit} | ${side(row.after, row.afterUnfilteredUs)} |${
          withBefore
            ? ` ${side(row.before, row.beforeUnfilteredUs)} | ${
                row.before ? `**${(row.after.totalUs / row.before.totalUs).toFixed(2)}**` : ''
              } |`
            : ''
        }`,
    ),
  ];
}

/** The HTTP rows of both apis line up by the count asked for (their files' change times differ). */
const matchingKey = (row: HttpRow) => String(row.asked);

export function renderSinceReport(report: SinceReport): string {
  const { sites } = report;
  const apis = [...new Set(report.http.map((row) => row.api))];
  const keys = [
    ...new Map(
      report.http.map((row) => [`${row.file}|${row.sort}|${matchingKey(row)}|${row.page}`, row]),
    ).values(),
  ];
  const httpTable = [
    `| file | sort | asked | page | ${apis.map((api) => `${api}: matching | rows | ms | unfiltered ms | ×`).join(' | ')} |`,
    `|---|---|---:|---|${apis.map(() => '---:|---:|---:|---:|---:').join('|')}|`,
    ...keys.map((key) => {
      const cells = apis.map((api) => {
        const row = report.http.find(
          (r) =>
            r.api === api &&
            r.file === key.file &&
            r.sort === key.sort &&
            r.page === key.page &&
            matchingKey(r) === matchingKey(key),
        );
        if (!row || row.peerMs === undefined) return ' |  |  |  | ';
        return `${n(row.matching ?? 0)} | ${row.rows}${row.short ? ' short' : ''} | ${row.medianMs} | ${row.peerMs} | **${times(row.medianMs, row.peerMs)}**`;
      });
      return `| ${key.file} | ${key.sort} | ${matchingLabel(key.asked, sites)} | ${key.page} | ${cells.join(' | ')} |`;
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
    "Median of many calls in one read snapshot each, as the api reads. *after*: this checkout's readPage on its file; *before*: the before checkout's readPage on the file its code built; *unfiltered*: the same side's page of the same sort and depth without a since (its peer), called in turn with it; ×: ÷ unfiltered; *short*: the page stopped at its scan budget (Page.reached) with more to come.",
    '',
    ...pageTable(report.pages, sites),
    '',
    '## readPage: clustered change times (the newest rows changed: the end of created_at / updated_at order)',
    '',
    ...pageTable(report.clustered, sites),
    '',
    '## Whole walks: every page of a since answer',
    '',
    "Each page timed in its own read snapshot; the next one starts after Page.reached or the last row, as links.next does. *short*: pages with fewer rows than the limit that still had more; *median page*, *max page*: the walk's pages; *max ×*: the slowest page ÷ the unfiltered page of the same side, sort and limit; *after total ÷ before*: the two sides' total walk time.",
    '',
    ...walkTable(report.walks, sites),
    '',
    '## readPage: each plan forced around the thresholds (deep pages, shuffled, this side)',
    '',
    `threshold (projections/src/read/since-plan.ts, changedPlanMax for pages of 50): id ${n(changedPlanMax(50, true))}, other sorts ${n(changedPlanMax(50, false))}. Each plan's µs for a page (walk-since: its budgeted page, which may be short: *walk-since rows*, its rows on average over the positions; *changed* always gives 50); *chosen*: what readPage takes.`,
    '',
    '| sort | matching | M / threshold | chosen | changed µs | walk-since µs | walk-since rows |',
    '|---|---:|---:|---|---:|---:|---:|',
    ...report.crossovers.map(
      (row) =>
        `| ${row.sort} | ${n(row.matching)} | ${(row.matching / changedPlanMax(50, row.sort.replace('-', '') === 'id')).toFixed(2)} | ${row.chosen} | ${[
          row.plans.changed,
          row.plans['walk-since'],
        ]
          .map((us) => (us === undefined ? '' : n(us)))
          .join(' | ')} | ${row.walkSinceRows} |`,
    ),
    '',
    `## readDeletions: µs per 50-row page of the five resource tables`,
    '',
    'matching: sites tombstones at or after the since; as many site_contacts tombstones (not asked for) are interleaved with them. *before*: the statement of 37854c8 (bench/api/parts/since-before.ts), on the same file.',
    '',
    '| matching | page | rows | before µs | after µs |',
    '|---:|---|---:|---:|---:|',
    ...report.deletions.map(
      (row) => `| ${n(row.matching)} | ${row.page} | ${row.rows} | ${n(row.beforeUs)} | ${n(row.afterUs)} |`,
    ),
    '',
    '## HTTP: GET /v1/sites, one request at a time (median ms)',
    '',
    "Each api on the files its own code built. *asked*: the count the since was chosen for; *matching*: the sites it matches in that api's file (clustered: a few fewer, the since being rounded up to the millisecond); *short*: fewer rows than the limit with links.next set (the page stopped at its budget); × is ÷ the same api's unfiltered page of the same sort and depth (its peer), requested in turn with it.",
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
