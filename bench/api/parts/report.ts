/**
 * The api benchmark's result document (bench/results/api-<date>.md): machine, inputs, one row per
 * measurement, the targets judged against the figures.
 */
import { cpus, loadavg, release, totalmem } from 'node:os';
import type { Measurement } from '../../shared/api-measure.ts';

export interface ReportInputs {
  readonly sites: number;
  readonly page: number;
  readonly limit: number;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly rate?: number | undefined;
  readonly projectionFileMiB: number;
  readonly fixtureBuildSeconds: number;
  readonly walkSeconds: number;
  readonly walkRequests: number;
  readonly pgLoadSeconds: number | undefined;
  /** 1-minute load average when the measurements started (other work on the machine skews them). */
  readonly loadBefore: number;
  readonly notes: readonly string[];
}

/** Targets (bench/README.md, api): list pages at half the static peer's req/s, items at 80 %. */
const TARGET_LIST_SHARE = 0.5;
const STRETCH_LIST_SHARE = 0.8;
const TARGET_ITEM_SHARE = 0.8;
const TARGET_PACED_P99_MS = 5;

function answers(row: Measurement, durationSeconds: number): string {
  if (row.requests === 0) return `**none completed within ${durationSeconds} s**`;
  return row.non2xx + row.errors === 0 ? 'ok' : `**${row.non2xx} non-2xx, ${row.errors} errors**`;
}

export function machine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown';
  return `${cpu}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ${release()}, Node ${process.version}`;
}

export function renderReport(date: string, inputs: ReportInputs, rows: readonly Measurement[]): string {
  const byName = new Map(rows.map((row) => [row.name, row]));
  const first = byName.get('api: list page 1');
  const deep = byName.get(`api: list page ${inputs.page}`);
  const item = byName.get('api: item');
  // The fixed-rate rows of the lighter load generator when it ran (api/parts/measure-wrk.ts), else autocannon's.
  const pacedAll = rows.filter((row) => row.name.startsWith('api:') && row.name.includes(' req/s'));
  const pacedWrk = pacedAll.filter((row) => row.name.endsWith('(wrk)'));
  const paced = pacedWrk.length > 0 ? pacedWrk : pacedAll;
  const pacedBy = pacedWrk.length > 0 ? 'wrk' : 'autocannon';
  const table = rows.map(
    (row) =>
      `| ${row.name} | ${row.requestsPerSecond.toLocaleString('en-US')} | ${row.p50Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.bytesPerResponse.toLocaleString('en-US')} | ${answers(row, inputs.durationSeconds)} |`,
  );
  const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
  const deepRatio = first && deep ? deep.requestsPerSecond / first.requestsPerSecond : 0;
  const peer = rows.find((row) => row.name.startsWith('peer: static') && !row.name.includes(' req/s'));
  const share = (row: Measurement | undefined) =>
    row && peer && peer.requestsPerSecond > 0 ? row.requestsPerSecond / peer.requestsPerSecond : 0;
  const listShares = [first, deep].filter((row) => row !== undefined).map(share);
  const percent = (value: number) => `${Math.round(value * 100)} %`;
  const variants = rows.filter(
    (row) => row.name.startsWith('api: list page 1 ') && !row.name.includes(' req/s'),
  );
  const ratio = (row: Measurement) =>
    first && first.requestsPerSecond > 0
      ? `${(row.requestsPerSecond / first.requestsPerSecond).toFixed(2)}× req/s, ${row.bytesPerResponse.toLocaleString('en-US')} B`
      : 'n/a';
  return `# api benchmark — ${date}

Run with \`pnpm --filter @pda/bench exec node api/list.ts\` (see bench/README.md). Not a test.

**Machine:** ${machine()}; 1-minute load average ${inputs.loadBefore.toFixed(2)} when the measurements started, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (the load generator runs on the same 2 cores; anything else running skews the figures).

**Inputs:** one company with ${inputs.sites.toLocaleString('en-US')} sites in its projection file (${inputs.projectionFileMiB} MiB, built through ProjectionStore.applyBatch in ${inputs.fixtureBuildSeconds} s, cached); \`GET /v1/sites?limit=${inputs.limit}\` at page 1 and at page ${inputs.page.toLocaleString('en-US')} (cursor reached by following links: ${inputs.walkRequests.toLocaleString('en-US')} sequential requests in ${inputs.walkSeconds} s), \`GET /v1/sites/{id}\`; autocannon, ${inputs.connections} connections, ${inputs.durationSeconds} s per row after ${inputs.warmupSeconds} s of warm-up, as fast as the server answers except the rows marked "at N req/s" (autocannon \`overallRate\`, or wrk with an even 1/rate cadence for the rows marked "(wrk)": latency below saturation); api process with its production plugins (auth by key hash, rate limiter with the in-process store, under-pressure), log level warn. Peers in the same run: PostgreSQL 15 with OFFSET paging (index on (company_id, id), table loaded${inputs.pgLoadSeconds === undefined ? '' : inputs.pgLoadSeconds === 0 ? ' by an earlier run' : ` in ${inputs.pgLoadSeconds} s`}) behind a bare node http server with a pg pool; the same bytes as the api's deep page from memory behind a bare node http server.

| measurement | req/s | p50 ms | p99 ms | max ms | bytes/response | answers |
|---|---:|---:|---:|---:|---:|---|
${table.join('\n')}

**Targets** (static peer: ${peer ? `${peer.requestsPerSecond.toLocaleString('en-US')} req/s` : 'not measured'})
- list pages ≥ ${percent(TARGET_LIST_SHARE)} of the static peer's req/s (stretch ${percent(STRETCH_LIST_SHARE)}): ${verdict(listShares.length === 2 && listShares.every((share) => share >= TARGET_LIST_SHARE))} (page 1 ${percent(share(first))}, page ${inputs.page.toLocaleString('en-US')} ${percent(share(deep))}).
- item ≥ ${percent(TARGET_ITEM_SHARE)} of the static peer: ${verdict(share(item) >= TARGET_ITEM_SHARE)} (${percent(share(item))}).
- p99 ≤ ${TARGET_PACED_P99_MS} ms for list pages at the fixed rate (${pacedBy}): ${verdict(paced.length > 0 && paced.every((row) => row.p99Ms <= TARGET_PACED_P99_MS))} (${paced.map((row) => `${row.p99Ms} ms`).join(', ')}).
- page ${inputs.page.toLocaleString('en-US')} as fast as page 1: ${verdict(deepRatio >= 0.9)} (deep/first throughput ${deepRatio.toFixed(2)}).
- relative to page 1: ${variants.map((row) => `${row.name.replace('api: list page 1 ', '')} ${ratio(row)}`).join(', ')}.
${inputs.notes.length > 0 ? `\n**Notes**\n${inputs.notes.map((note) => `- ${note}`).join('\n')}\n` : ''}`;
}
