/**
 * Change-feed page cost (NOT a test; bench/README.md, "change feed"): a 50-change page of
 * GET /v1/changes (every type the key reads: the feed's default) against a 50-row page of
 * GET /v1/sites, both from the same api process, on companies of several sizes. Target: a feed
 * page costs at most 1.5× the plain list page, at any company size (docs/decisions/0013).
 *
 *   pnpm --filter @pda/bench exec node api/changes.ts [--sites 10000,100000,1000000]
 *     [--budget-ms 1500] [--duration 3] [--connections 10]
 *
 * Inputs: api-list's company of each size (bench/shared/api-fixture.ts, cached under .data/bench/; its
 * change times follow the order the rows were written). For each size, in one api process:
 * 1. sequential requests, interleaved (one of each per round), median ms: the feed's first page,
 *    a feed page from the middle of the feed and one near its end (reached by following
 *    links.next, as a partner does), against the list's page 1 and a list page from the middle;
 * 2. page 1 of each under autocannon: req/s, p99 and the api process's CPU per request (from
 *    /proc: steadier than req/s on a shared machine, where the load generator and other work take
 *    turns on the same cores), the feed's over the list's (the list measured before and after).
 * Writes bench/results/api-changes-<date>.md and prints it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { listFixture } from '../shared/api-fixture.ts';
import { type Measurement, measure } from '../shared/api-measure.ts';
import { answersHealth, benchApiEnv, startServer } from '../shared/api-processes.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { processCpuSeconds } from '../shared/process-cpu.ts';
import { machine } from './parts/report.ts';
import { deepUrl, sequential } from './parts/since-http.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '10000,100000,1000000' },
    'budget-ms': { type: 'string', default: '1500' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
  },
});
const sizes = args.sites.split(',').map(Number);
const budgetMs = Number(args['budget-ms']);
const load = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration),
  warmupSeconds: 1,
};

const repo = repoRoot;
const log = (line: string) => process.stderr.write(`api-changes: ${line}\n`);

interface SizeResult {
  readonly sites: number;
  readonly sequential: {
    readonly name: string;
    readonly medianMs: number;
    readonly requests: number;
    readonly rows: number;
  }[];
  readonly load: (Measurement & { readonly cpuUsPerRequest: number })[];
}

const loadAtStart = loadavg()[0] ?? 0;
const results: SizeResult[] = [];
for (const sites of sizes) {
  const fixture = listFixture(join(repo, '.data', 'bench'), sites);
  log(`${sites} sites: fixture ready`);
  const port = await freePort();
  const server = await startServer(
    `api (${sites} sites)`,
    join(repo, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(fixture.dataDir, port),
    answersHealth,
  );
  try {
    const headers = { authorization: `Bearer ${fixture.key}` };
    const feed = `${server.base}/v1/changes?limit=50`;
    const list = `${server.base}/v1/sites?limit=50`;
    // The feed holds every row of the company: the catalogue's few, then the sites.
    const half = Math.floor(sites / 2);
    const urls = [
      { name: 'list page 1', url: list },
      { name: 'feed first page', url: feed },
      { name: 'list page from the middle', url: await deepUrl(list, headers, half) },
      { name: 'feed page from the middle', url: await deepUrl(feed, headers, half) },
      { name: 'feed page near the end', url: await deepUrl(feed, headers, sites - 100) },
    ];
    log(`${sites} sites: deep pages reached; sequential requests`);
    const timed = await sequential(
      urls.map((u) => u.url),
      headers,
      budgetMs,
    );
    const sequentialRows = urls.map((u, index) => ({ name: u.name, ...timed[index]! }));
    log(`${sites} sites: page 1 under load`);
    // The warm-up apart, so that the CPU read around the measurement is its requests' only.
    const underLoad = async (name: string, url: string) => {
      await measure(name, url, headers, { ...load, durationSeconds: load.warmupSeconds, warmupSeconds: 0 });
      const before = processCpuSeconds(server.pid);
      const measured = await measure(name, url, headers, { ...load, warmupSeconds: 0 });
      const cpuUs = (processCpuSeconds(server.pid) - before) * 1e6;
      return {
        ...measured,
        cpuUsPerRequest: measured.requests > 0 ? Math.round(cpuUs / measured.requests) : 0,
      };
    };
    const loaded = [
      await underLoad('list page 1', list),
      await underLoad('feed first page', feed),
      await underLoad('list page 1 (again)', list),
    ];
    results.push({ sites, sequential: sequentialRows, load: loaded });
  } finally {
    await server.stop();
  }
}

const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '—');
const date = new Date().toISOString().slice(0, 10);
const lines = [
  `# change-feed page cost — ${date}`,
  '',
  'Run with `pnpm --filter @pda/bench exec node api/changes.ts` (see bench/README.md). Not a test.',
  '',
  `**Machine:** ${machine()}; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end (the load generator runs on the same cores).`,
  '',
  "**Inputs:** api-list's company of each size (bench/shared/api-fixture.ts: the sites, 8 services, 4 categories, 12 equipment, 6 consumables; change times in the order the rows were written); one api process per size (api/src/main.ts, log level warn); `GET /v1/changes?limit=50` (every type the key reads) against `GET /v1/sites?limit=50`. Sequential: one request at a time, the URLs interleaved, median ms; deep pages reached by following links.next. Load: autocannon, " +
    `${load.connections} connections, ${load.durationSeconds} s after ${load.warmupSeconds} s of warm-up, the list measured before and after the feed; the api process's CPU (user + system, /proc) over the ${load.durationSeconds} s divided by the requests answered.`,
  '',
  '| sites | request | median ms (sequential) | × list page | rows |',
  '|---:|---|---:|---:|---:|',
];
for (const result of results) {
  const [first, , middle] = result.sequential;
  for (const row of result.sequential) {
    const peer = row.name.includes('middle') || row.name.includes('end') ? middle : first;
    lines.push(
      `| ${result.sites.toLocaleString('en-US')} | ${row.name} | ${row.medianMs} | ${row.name.startsWith('list') ? '' : ratio(row.medianMs, peer?.medianMs ?? 0)} | ${row.rows} |`,
    );
  }
}
lines.push(
  '',
  '| sites | page 1 under load | req/s | p99 ms | feed req/s ÷ mean list req/s | api CPU µs/request | feed CPU ÷ mean list CPU |',
  '|---:|---|---:|---:|---:|---:|---:|',
);
for (const result of results) {
  const [before, feedRow, after] = result.load;
  const listMean = ((before?.requestsPerSecond ?? 0) + (after?.requestsPerSecond ?? 0)) / 2;
  const listCpuMean = ((before?.cpuUsPerRequest ?? 0) + (after?.cpuUsPerRequest ?? 0)) / 2;
  for (const row of result.load) {
    const invalid = row.non2xx + row.errors > 0 ? ` (${row.non2xx} non-2xx, ${row.errors} errors)` : '';
    const feedRatios =
      row === feedRow
        ? [
            ratio(row.requestsPerSecond, listMean),
            row.cpuUsPerRequest,
            ratio(row.cpuUsPerRequest, listCpuMean),
          ]
        : ['', row.cpuUsPerRequest, ''];
    lines.push(
      `| ${result.sites.toLocaleString('en-US')} | ${row.name}${invalid} | ${row.requestsPerSecond.toLocaleString('en-US')} | ${row.p99Ms} | ${feedRatios.join(' | ')} |`,
    );
  }
}
const report = `${lines.join('\n')}\n`;
const out = join(resultsDir, `api-changes-${date}.md`);
mkdirSync(resultsDir, { recursive: true });
writeFileSync(out, report);
process.stdout.write(report);
log(`written to ${out}`);
