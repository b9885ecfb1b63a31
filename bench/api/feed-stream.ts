/**
 * The change feed streamed against paged (NOT a test; issue 36, targets in the report): a full copy
 * of one company through GET /v1/changes, from its start until caught up, by a partner that parses
 * every item, (a) as pages of 200 followed with @pda/client and (b) as one NDJSON stream, each
 * without compression and compressed; then commit → partner latency, a live stream against a
 * `wait=30` long poll, on a small company.
 *
 *   pnpm --filter @pda/bench exec node api/feed-stream.ts [--sites 1000000] [--latency-changes 100] [--out results/<file>.md]
 *
 * The api runs in its own process on the cached list fixture (shared/api-fixture.ts: N sites and
 * a small catalogue, no contacts), its rate limit out of the way (an unlimited budget). Per copy:
 * wall time until the copy is complete (client parsing included), requests, bytes on the wire,
 * items/s, the api's CPU per item, and its peak resident memory during the copy above what it held
 * before (VmHWM, reset before each copy through /proc/<pid>/clear_refs).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { listFixture } from '../shared/api-fixture.ts';
import { answersHealth, benchApiEnv, type Server, startServer } from '../shared/api-processes.ts';
import { codeState, machine } from '../shared/machine.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { processStats } from '../shared/process-stats.ts';
import { measureFeedLatency } from './parts/feed-latency.ts';
import { type Copied, copyPaged, copyStreamed } from './parts/feed-readers.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '1000000' },
    'latency-changes': { type: 'string', default: '100' },
    out: { type: 'string' },
  },
});
const sites = Number(args.sites);
const log = (line: string) => console.error(`[feed-stream] ${line}`);
const loadAtStart = loadavg();
const fixtures = join(repoRoot, '.data', 'bench');

async function startApi(dataDir: string): Promise<Server> {
  const port = await freePort();
  return startServer(
    'api',
    join(repoRoot, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(dataDir, port),
    answersHealth,
  );
}

interface CopyRow extends Copied {
  readonly way: string;
  readonly itemsPerSecond: number;
  readonly apiCpuUsPerItem: number;
  readonly apiPeakAboveIdleMb: number;
}

/** One copy, with the api's CPU and its peak memory above what it held before. */
async function measured(api: Server, way: string, copy: () => Promise<Copied>): Promise<CopyRow> {
  writeFileSync(`/proc/${api.pid}/clear_refs`, '5');
  const before = processStats(api.pid);
  const copied = await copy();
  const after = processStats(api.pid);
  const row: CopyRow = {
    way,
    ...copied,
    itemsPerSecond: Math.round(copied.items / copied.seconds),
    apiCpuUsPerItem: Math.round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / copied.items) / 1,
    apiPeakAboveIdleMb: after.peakRssMb - before.rssMb,
  };
  log(`${way}: ${JSON.stringify(row)}`);
  return row;
}

const fixture = listFixture(fixtures, sites);
log(`${sites} sites: fixture ready`);
const api = await startApi(fixture.dataDir);
const copies: CopyRow[] = [];
try {
  const { base } = api;
  const key = fixture.key;
  // The stream first once, unmeasured: the file's pages in the page cache for every way alike.
  await copyStreamed(base, key, 'identity');
  copies.push(
    await measured(api, 'pages of 200 (@pda/client), identity', () => copyPaged(base, key, 'identity')),
  );
  copies.push(await measured(api, 'one NDJSON stream, identity', () => copyStreamed(base, key, 'identity')));
  copies.push(await measured(api, 'pages of 200 (@pda/client), gzip', () => copyPaged(base, key, 'gzip')));
  copies.push(await measured(api, 'one NDJSON stream, gzip', () => copyStreamed(base, key, 'gzip')));
  copies.push(await measured(api, 'one NDJSON stream, zstd', () => copyStreamed(base, key, 'zstd')));
} finally {
  await api.stop();
}

log('latency: a small company, a live stream and a long poll side by side');
const small = listFixture(fixtures, 2_000, 'bench-feed-latency');
const latencyApi = await startApi(small.dataDir);
let latency: Awaited<ReturnType<typeof measureFeedLatency>>;
try {
  latency = await measureFeedLatency({
    base: latencyApi.base,
    key: small.key,
    dataDir: small.dataDir,
    companyId: small.companyId,
    siteId: small.middleSiteId,
    changes: Number(args['latency-changes']),
    everyMs: 100,
  });
} finally {
  await latencyApi.stop();
}

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (x: number) => Math.round(x * 10) / 10;
const paged = copies[0]!;
const streamed = copies[1]!;
const report = {
  machine: machine(loadAtStart, 'inherited'),
  code: codeState(repoRoot),
  inputs: { sites, items: streamed.items, latencyChanges: latency.changes, latencyEveryMs: 100 },
  copies,
  streamedOverPaged: Math.round((paged.seconds / streamed.seconds) * 10) / 10,
  latency: {
    stream: {
      received: latency.streamMs.length,
      p50: ms(percentile(latency.streamMs, 50)),
      p99: ms(percentile(latency.streamMs, 99)),
    },
    longPoll: {
      received: latency.longPollMs.length,
      p50: ms(percentile(latency.longPollMs, 50)),
      p99: ms(percentile(latency.longPollMs, 99)),
    },
  },
};
const lines = [
  `# The change feed streamed against paged, ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memoryGb} GiB, Node ${report.machine.node}; load ${report.machine.loadAverage.start.join(' ')} → ${report.machine.loadAverage.end.join(' ')}. Code: ${report.code.commit}${report.code.uncommitted.length > 0 ? ' (with uncommitted changes)' : ''}.`,
  `Input: one company of ${sites.toLocaleString('en')} sites and a small catalogue (${streamed.items.toLocaleString('en')} items in the feed), the api in its own process, no rate limit. Command: \`pnpm --filter @pda/bench exec node api/feed-stream.ts --sites ${sites}\`.`,
  '',
  '| way | wall s | items/s | requests | bytes on the wire | api CPU µs/item | api peak above idle (MB) |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...copies.map(
    (c) =>
      `| ${c.way} (${c.coding}) | ${c.seconds.toFixed(1)} | ${c.itemsPerSecond.toLocaleString('en')} | ${c.requests.toLocaleString('en')} | ${c.wireBytes.toLocaleString('en')} | ${c.apiCpuUsPerItem} | ${c.apiPeakAboveIdleMb} |`,
  ),
  '',
  `Streamed ÷ paged wall time (identity): **${report.streamedOverPaged}x** faster (target ≥ 10x); streamed identity ${streamed.itemsPerSecond.toLocaleString('en')} items/s (target ≥ 100,000).`,
  '',
  `Commit → partner, ${latency.changes} site renames 100 ms apart on a 2,000-site company: live stream p50 ${report.latency.stream.p50} ms, p99 ${report.latency.stream.p99} ms (${report.latency.stream.received} received); long poll (wait=30) p50 ${report.latency.longPoll.p50} ms, p99 ${report.latency.longPoll.p99} ms (${report.latency.longPoll.received} received).`,
  '',
  '```json',
  JSON.stringify(report, null, 2),
  '```',
  '',
];
const out = args.out ?? join(resultsDir, `feed-stream-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(out, lines.join('\n'));
console.log(lines.join('\n'));
