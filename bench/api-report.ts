/**
 * The api benchmark's result document (bench/results/api-<date>.md): machine, inputs, one row per
 * measurement, the targets judged against the figures.
 */
import { cpus, loadavg, release, totalmem } from 'node:os';
import type { Measurement } from './api-measure.ts';

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

const TARGET_P99_MS = 10;
const TARGET_RPS = 5_000;

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
  const apiRows = [first, deep, item].filter((row): row is Measurement => row !== undefined);
  const paced = rows.filter((row) => row.name.startsWith('api:') && row.name.includes(' req/s'));
  const table = rows.map(
    (row) =>
      `| ${row.name} | ${row.requestsPerSecond.toLocaleString('en-US')} | ${row.p50Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.bytesPerResponse.toLocaleString('en-US')} | ${answers(row, inputs.durationSeconds)} |`,
  );
  const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
  const deepRatio = first && deep ? deep.requestsPerSecond / first.requestsPerSecond : 0;
  return `# api benchmark — ${date}

Run with \`pnpm --filter @pda/bench exec node api-list.ts\` (see bench/README.md). Not a test.

**Machine:** ${machine()}; 1-minute load average ${inputs.loadBefore.toFixed(2)} when the measurements started, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (the load generator runs on the same 2 cores; anything else running skews the figures).

**Inputs:** one company with ${inputs.sites.toLocaleString('en-US')} sites in its projection file (${inputs.projectionFileMiB} MiB, built through ProjectionStore.applyBatch in ${inputs.fixtureBuildSeconds} s, cached); \`GET /v1/sites?limit=${inputs.limit}\` at page 1 and at page ${inputs.page.toLocaleString('en-US')} (cursor reached by following links: ${inputs.walkRequests.toLocaleString('en-US')} sequential requests in ${inputs.walkSeconds} s), \`GET /v1/sites/{id}\`; autocannon, ${inputs.connections} connections, ${inputs.durationSeconds} s per row after ${inputs.warmupSeconds} s of warm-up, as fast as the server answers except the rows marked "at N req/s" (autocannon \`overallRate\`: latency below saturation); api process with its production plugins (auth by key hash, rate limiter with the in-process store, under-pressure), log level warn. Peers in the same run: PostgreSQL 15 with OFFSET paging (index on (company_id, id), table loaded${inputs.pgLoadSeconds === undefined ? '' : inputs.pgLoadSeconds === 0 ? ' by an earlier run' : ` in ${inputs.pgLoadSeconds} s`}) behind a bare node http server with a pg pool; the same bytes as the api's deep page from memory behind a bare node http server.

| measurement | req/s | p50 ms | p99 ms | max ms | bytes/response | answers |
|---|---:|---:|---:|---:|---:|---|
${table.join('\n')}

**Targets**
- p99 < ${TARGET_P99_MS} ms on the api rows at full load: ${verdict(apiRows.length === 3 && apiRows.every((row) => row.p99Ms < TARGET_P99_MS))} (${apiRows.map((row) => `${row.p99Ms} ms`).join(', ')}); at the fixed rate: ${verdict(paced.length > 0 && paced.every((row) => row.p99Ms < TARGET_P99_MS))} (${paced.map((row) => `${row.p99Ms} ms`).join(', ')}).
- page ${inputs.page.toLocaleString('en-US')} as fast as page 1: ${verdict(deepRatio >= 0.9)} (deep/first throughput ${deepRatio.toFixed(2)}).
- ≥ ${TARGET_RPS.toLocaleString('en-US')} req/s: ${verdict(apiRows.length === 3 && apiRows.every((row) => row.requestsPerSecond >= TARGET_RPS))} (${apiRows.map((row) => row.requestsPerSecond.toLocaleString('en-US')).join(', ')}).
${inputs.notes.length > 0 ? `\n**Notes**\n${inputs.notes.map((note) => `- ${note}`).join('\n')}\n` : ''}`;
}
