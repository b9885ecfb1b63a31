/**
 * Compressed list pages (NOT a test; issue 23 item 5, api/README.md "Compression"): a 50-row page
 * of sites with each compression option, as req/s, p50/p99, bytes and the api's CPU per request,
 * each a ratio to the plain page measured in the same run. Target: the shipped settings with
 * `Accept-Encoding: gzip, deflate, br` at ≥ 0.7× the plain page's req/s, with bytes ≤ 1.5× the
 * gzip bytes of the settings before (stream pipeline, zlib's default level).
 *
 *   pnpm --filter @pda/bench exec node api/compression.ts [--sites 100000] [--limit 50]
 *     [--connections 10] [--duration 2] [--warmup 1] [--rounds 3] [--only <substrings of row names, separated by |>]
 *
 * The fixture is api/list.ts's (bench/shared/api-fixture.ts, cached under .data/bench/). Each option runs
 * in an api process of its own (api/parts/compression-server.ts: main.ts with other compression
 * settings), all started and warmed up first; then rounds over every row, each row measured
 * between two measurements of the plain page and its ratio taken to those two (the median over
 * rounds is reported).
 * Before measuring, each row's answer is checked: the Content-Encoding expected and a body that
 * decodes to exactly the plain page's bytes. Writes bench/results/api-compression-<date>.md.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  brotliDecompressSync,
  constants,
  deflateRawSync,
  gunzipSync,
  gzipSync,
  inflateSync,
  zstdDecompressSync,
} from 'node:zlib';
import { COMPRESSION, type CompressionSettings } from '@pda/api';
import { freePort } from '@pda/projections/testing';
import { listFixture } from '../shared/api-fixture.ts';
import { type LoadOptions, type Measurement, measure } from '../shared/api-measure.ts';
import { benchApiEnv, printedReady, type Server, startServer } from '../shared/api-processes.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import type { Variant } from './parts/compression-server.ts';
import { machine } from './parts/report.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '100000' },
    limit: { type: 'string', default: '50' },
    connections: { type: 'string', default: '10' },
    duration: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
  },
});
const sites = Number(args.sites);
const limit = Number(args.limit);
const rounds = Number(args.rounds);
const load: LoadOptions = {
  connections: Number(args.connections),
  durationSeconds: Number(args.duration),
  warmupSeconds: Number(args.warmup),
};

const ALL = 'gzip, deflate, br';
/** @fastify/compress's one-shot path for any size (JSON drops Infinity). */
const ONE_SHOT = 2 ** 30;
const settings = (changes: Partial<CompressionSettings>): Variant => ({
  kind: 'settings',
  settings: { ...COMPRESSION, ...changes },
});

interface Row {
  readonly name: string;
  readonly acceptEncoding: string | undefined;
  readonly expect: string | undefined;
}
interface Group {
  readonly variant: Variant;
  readonly rows: readonly Row[];
}
const row = (name: string, acceptEncoding: string | undefined, expect: string | undefined): Row => ({
  name,
  acceptEncoding,
  expect,
});

const groups: Group[] = [
  { variant: { kind: 'shipped' }, rows: [row('plain', undefined, undefined)] },
  {
    // The api's plugin before: @fastify/compress, br preferred at quality 4, zlib's default level 6,
    // the stream pipeline for bodies over its one-shot bound (8 KiB on 2 cores).
    variant: { kind: 'fastify-compress', options: { global: true, encodings: ['br', 'gzip'] } },
    rows: [row('before: stream, br q4', ALL, 'br'), row('before: stream, gzip level 6', 'gzip', 'gzip')],
  },
  {
    variant: {
      kind: 'fastify-compress',
      options: { global: true, encodings: ['gzip'], syncThreshold: 0, zlibOptions: { level: 1 } },
    },
    rows: [row('@fastify/compress stream, gzip level 1', 'gzip', 'gzip')],
  },
  {
    variant: {
      kind: 'fastify-compress',
      options: { global: true, encodings: ['gzip'], syncThreshold: ONE_SHOT, zlibOptions: { level: 1 } },
    },
    rows: [row('@fastify/compress one-shot (gzipSync), gzip level 1', 'gzip', 'gzip')],
  },
  {
    variant: { kind: 'thread-pool', level: 1 },
    rows: [row("gzip level 1 on zlib's thread pool", 'gzip', 'gzip')],
  },
  {
    variant: settings({ reuseEngines: false, zlibLevel: 1, brotliQuality: 1, zstdLevel: 1 }),
    rows: [
      row('one-shot *Sync, gzip level 1', 'gzip', 'gzip'),
      row('one-shot *Sync, deflate level 1', 'deflate', 'deflate'),
      row('one-shot *Sync, br q1', 'br', 'br'),
      row('one-shot *Sync, zstd level 1', 'zstd', 'zstd'),
    ],
  },
  {
    variant: settings({ reuseEngines: false, zlibLevel: 6, brotliQuality: 4, zstdLevel: 3 }),
    rows: [
      row('one-shot *Sync, gzip level 6', 'gzip', 'gzip'),
      row('one-shot *Sync, br q4', 'br', 'br'),
      row('one-shot *Sync, zstd level 3', 'zstd', 'zstd'),
    ],
  },
  {
    variant: settings({ reuseEngines: false, brotliQuality: 0 }),
    rows: [row('one-shot *Sync, br q0', 'br', 'br')],
  },
  {
    variant: settings({ reuseEngines: false, brotliQuality: 2 }),
    rows: [row('one-shot *Sync, br q2', 'br', 'br')],
  },
  {
    variant: settings({ reuseEngines: true, zlibLevel: 1 }),
    rows: [
      row('one-shot reused engine, gzip level 1', 'gzip', 'gzip'),
      row('one-shot reused engine, deflate level 1', 'deflate', 'deflate'),
    ],
  },
  {
    variant: settings({ reuseEngines: true, brotliQuality: 0 }),
    rows: [row('one-shot reused engine, br q0', 'br', 'br')],
  },
  {
    variant: settings({ reuseEngines: true, brotliQuality: 1 }),
    rows: [row('one-shot reused engine, br q1', 'br', 'br')],
  },
  {
    variant: settings({ reuseEngines: true, brotliQuality: 2 }),
    rows: [row('one-shot reused engine, br q2', 'br', 'br')],
  },
  {
    variant: settings({ reuseEngines: true, zlibLevel: 3 }),
    rows: [row('one-shot reused engine, gzip level 3', 'gzip', 'gzip')],
  },
  {
    variant: settings({ reuseEngines: true, zlibLevel: 6 }),
    rows: [row('one-shot reused engine, gzip level 6', 'gzip', 'gzip')],
  },
  {
    variant: { kind: 'shipped' },
    rows: [row(`shipped: ${ALL}`, ALL, undefined), row(`shipped: ${ALL}, zstd`, `${ALL}, zstd`, undefined)],
  },
];

interface Answer {
  readonly status: number;
  readonly encoding: string | undefined;
  readonly contentLength: number;
  readonly body: Buffer;
}

function get(url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          encoding: response.headers['content-encoding'],
          contentLength: Number(response.headers['content-length'] ?? Number.NaN),
          body: Buffer.concat(chunks),
        }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

const DECODE: Record<string, (body: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
};

let plainPage: Buffer | undefined;

/**
 * Bytes of the page if each row were compressed alone, once, and the pieces stitched into one
 * deflate stream (Z_FULL_FLUSH ends each piece on a byte boundary with no reference to the rows
 * before it, so any sequence of them is a valid stream): what pre-compressed rows would send.
 */
function fragmentBytes(page: Buffer): { fragments: number; whole: number } {
  const { data, ...rest } = JSON.parse(page.toString('utf8')) as { data: unknown[] };
  const envelope = deflateRawSync(JSON.stringify(rest), { level: 9 }).length;
  const rows = data.map(
    (row) =>
      deflateRawSync(`${JSON.stringify(row)},`, { level: 9, finishFlush: constants.Z_FULL_FLUSH }).length,
  );
  // gzip's header and trailer: 18 bytes.
  return {
    fragments: 18 + envelope + rows.reduce((a, b) => a + b, 0),
    whole: gzipSync(page, { level: 1 }).length,
  };
}

/** The row's answer, checked: status 200, the coding expected, bytes that decode to the plain page. */
async function check(url: string, auth: Record<string, string>, r: Row): Promise<Answer> {
  // A process just started may still shed load (under-pressure judges its start-up's event loop).
  for (let attempt = 0; attempt < 40 && (await get(url, auth)).status === 503; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const plain = await get(url, auth);
  plainPage ??= plain.body;
  const answer = await get(url, {
    ...auth,
    ...(r.acceptEncoding ? { 'accept-encoding': r.acceptEncoding } : {}),
  });
  const problems: string[] = [];
  if (answer.status !== 200) problems.push(`status ${answer.status}`);
  if (r.expect !== undefined && answer.encoding !== r.expect)
    problems.push(`Content-Encoding ${answer.encoding} instead of ${r.expect}`);
  const decode = answer.encoding === undefined ? (body: Buffer) => body : DECODE[answer.encoding];
  if (!decode) problems.push(`unknown Content-Encoding ${answer.encoding}`);
  else if (!decode(answer.body).equals(plain.body)) problems.push('decoded body differs from the plain page');
  if (!Number.isNaN(answer.contentLength) && answer.contentLength !== answer.body.length)
    problems.push(`Content-Length ${answer.contentLength} for ${answer.body.length} bytes`);
  if (problems.length > 0) throw new Error(`${r.name}: ${problems.join('; ')}`);
  return answer;
}

/** User + system CPU time of a process in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Target {
  readonly row: Row;
  readonly server: Server;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly encoding: string | undefined;
  readonly bodyBytes: number;
  readonly chunked: boolean;
}
interface Sample {
  readonly measurement: Measurement;
  readonly cpuUsPerRequest: number;
  /** req/s over the mean of the plain page's measurements just before and just after. */
  readonly ratio: number;
  readonly cpuRatio: number;
}

const repo = repoRoot;
const log = (line: string) => process.stderr.write(`api-compression: ${line}\n`);
log(`projection with ${sites} sites (built once, then cached under .data/bench/)`);
const fixture = listFixture(join(repo, '.data', 'bench'), sites);
const auth = { authorization: `Bearer ${fixture.key}` };
const servers: Server[] = [];
const targets: Target[] = [];
let plainTarget: Target | undefined;
const samples = new Map<Target, Sample[]>();
let loadBefore = 0;

try {
  for (const group of groups) {
    const rows = group.rows.filter(
      (r) =>
        args.only === undefined ||
        args.only.split('|').some((part) => r.name.includes(part)) ||
        r.acceptEncoding === undefined,
    );
    if (rows.length === 0) continue;
    const port = await freePort();
    const server = await startServer(
      'api',
      join(import.meta.dirname, 'parts', 'compression-server.ts'),
      port,
      benchApiEnv(fixture.dataDir, port, { BENCH_COMPRESSION: JSON.stringify(group.variant) }),
      printedReady,
    );
    servers.push(server);
    const url = `${server.base}/v1/sites?limit=${limit}`;
    for (const r of rows) {
      const answer = await check(url, auth, r);
      const headers = { ...auth, ...(r.acceptEncoding ? { 'accept-encoding': r.acceptEncoding } : {}) };
      const target: Target = {
        row: r,
        server,
        url,
        headers,
        encoding: answer.encoding,
        bodyBytes: answer.body.length,
        chunked: Number.isNaN(answer.contentLength),
      };
      targets.push(target);
      if (r.acceptEncoding === undefined) plainTarget ??= target;
    }
  }

  // Every process warmed up once (JIT, connections); then rounds in which each row is measured
  // between two measurements of the plain page, and its ratio is to those two neighbours: other
  // work on the machine comes and goes over seconds, and then weighs on both sides of a ratio.
  for (const { url, headers, row } of targets) {
    log(`warm-up: ${row.name}`);
    await measure(row.name, url, headers, { ...load, durationSeconds: load.warmupSeconds, warmupSeconds: 0 });
  }
  loadBefore = loadavg()[0] ?? 0;
  const plain = plainTarget;
  if (!plain) throw new Error('no plain row');
  const run = async (target: Target) => {
    const before = cpuMs(target.server.pid);
    const measurement = await measure(target.row.name, target.url, target.headers, {
      ...load,
      warmupSeconds: 0,
    });
    const cpu = cpuMs(target.server.pid) - before;
    return {
      measurement,
      cpuUsPerRequest: measurement.requests > 0 ? (cpu * 1000) / measurement.requests : 0,
    };
  };
  const record = (target: Target, sample: Sample) => {
    samples.set(target, [...(samples.get(target) ?? []), sample]);
  };
  for (let round = 1; round <= rounds; round++) {
    log(`round ${round}/${rounds}`);
    let previous = await run(plain);
    record(plain, { ...previous, ratio: 1, cpuRatio: 1 });
    for (const target of targets) {
      if (target === plain) continue;
      const current = await run(target);
      const next = await run(plain);
      record(plain, { ...next, ratio: 1, cpuRatio: 1 });
      record(target, {
        ...current,
        ratio:
          current.measurement.requestsPerSecond /
          mean([previous.measurement.requestsPerSecond, next.measurement.requestsPerSecond]),
        cpuRatio: mean([previous.cpuUsPerRequest, next.cpuUsPerRequest]) / current.cpuUsPerRequest,
      });
      previous = next;
    }
  }
} finally {
  for (const server of servers.reverse()) await server.stop();
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
}
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : mean(sorted.slice(middle - 1, middle + 1));
}

const loadAfter = loadavg()[0] ?? 0;
const n = (value: number) => Math.round(value).toLocaleString('en-US');
const x = (value: number) => `${value.toFixed(2)}×`;
interface Summary {
  readonly target: Target;
  readonly rate: number;
  readonly ratio: number;
  readonly ratios: readonly number[];
  readonly p50: number;
  readonly p99: number;
  readonly bytes: number;
  readonly cpu: number;
  readonly cpuRatio: number;
  readonly failures: number;
}
const summaries: Summary[] = targets.map((target) => {
  const list = samples.get(target) ?? [];
  const of = (pick: (sample: Sample) => number) => median(list.map(pick));
  return {
    target,
    rate: of((s) => s.measurement.requestsPerSecond),
    ratio: of((s) => s.ratio),
    ratios: list.map((s) => s.ratio),
    p50: of((s) => s.measurement.p50Ms),
    p99: of((s) => s.measurement.p99Ms),
    bytes: of((s) => s.measurement.bytesPerResponse),
    cpu: of((s) => s.cpuUsPerRequest),
    cpuRatio: of((s) => s.cpuRatio),
    failures: list.reduce(
      (sum, s) => sum + s.measurement.non2xx + s.measurement.errors + (s.measurement.requests > 0 ? 0 : 1),
      0,
    ),
  };
});
const table = summaries.map((s) => {
  const { row, encoding, bodyBytes, chunked } = s.target;
  const ratio =
    s.target === plainTarget
      ? `(baseline: ${n(s.rate)} req/s median of ${s.ratios.length})`
      : `**${x(s.ratio)}** (${s.ratios.map((r) => r.toFixed(2)).join(' / ')})`;
  return `| ${row.name} | ${row.acceptEncoding ?? '(none)'} | ${encoding ?? 'identity'} | ${n(s.rate)} | ${ratio} | ${s.p50} | ${s.p99} | ${n(s.bytes)} | ${n(bodyBytes)}${chunked ? ' (chunked)' : ''} | ${n(s.cpu)} | ${x(s.cpuRatio)} | ${s.failures === 0 ? 'ok' : `**${s.failures} failed**`} |`;
});
const byName = (name: string) => summaries.find((s) => s.target.row.name === name);
const beforeGzip = byName('before: stream, gzip level 6');
const shipped = byName(`shipped: ${ALL}`);
const verdict = (ok: boolean) => (ok ? 'met' : '**not met**');
const judged =
  shipped && beforeGzip
    ? [
        `- req/s of the shipped settings with \`${ALL}\` ≥ 0.7× plain: ${verdict(shipped.ratio >= 0.7)} (${x(shipped.ratio)}, median of the rounds).`,
        `- bytes ≤ 1.5× the gzip bytes before (${n(beforeGzip.bytes)} per response): ${verdict(shipped.bytes <= 1.5 * beforeGzip.bytes)} (${n(shipped.bytes)}, ${x(shipped.bytes / beforeGzip.bytes)}).`,
      ]
    : ['- not judged: the shipped or the before rows were not measured (--only).'];

const fragments = plainPage ? fragmentBytes(plainPage) : undefined;
const fragmentNote = fragments
  ? `\n**Pre-compressed rows** (not served; bytes only): each row of the plain page compressed alone at level 9 and stitched into one gzip stream would be ${n(fragments.fragments)} B, ${x(fragments.fragments / fragments.whole)} the whole page at gzip level 1 (${n(fragments.whole)} B): a row alone cannot refer to the keys and values the rows before it repeat.\n`
  : '';

const date = new Date().toISOString().slice(0, 10);
const report = `# api compression benchmark — ${date}

Run with \`pnpm --filter @pda/bench exec node api/compression.ts\` (see bench/README.md). Not a test.

**Machine:** ${machine()}; 1-minute load average ${loadBefore.toFixed(2)} when the measurements started, ${loadAfter.toFixed(2)} at the end (the load generator runs on the same 2 cores; anything else running skews the figures).

**Inputs:** one company with ${sites.toLocaleString('en-US')} sites (bench/shared/api-fixture.ts); \`GET /v1/sites?limit=${limit}\` (page 1); autocannon, ${load.connections} connections, each process warmed up for ${load.warmupSeconds} s, then ${rounds} rounds in which every row is measured for ${load.durationSeconds} s between two ${load.durationSeconds} s measurements of the plain page; each option in an api process of its own (api/parts/compression-server.ts: main.ts's plugins, log level warn). Each answer was checked before it was measured: the Content-Encoding shown, a body that decodes to exactly the plain page, a Content-Length equal to the body (or chunked). Figures are medians over the rounds; "× plain" is a row's req/s over the mean of the plain measurements just before and after it (each round's ratio in brackets), and the same for CPU; "api CPU" is the api process's user + system time per request (/proc), steadier than req/s when other work shares the cores; bytes/response include the headers (autocannon), body B is the body alone.

| option | Accept-Encoding | Content-Encoding | req/s | × plain | p50 ms | p99 ms | bytes/response | body B | api CPU µs/req | × plain (CPU) | answers |
|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|
${table.join('\n')}

**Targets**
${judged.join('\n')}
${fragmentNote}`;
mkdirSync(resultsDir, { recursive: true });
const out = join(resultsDir, `api-compression-${date}.md`);
if (args.only === undefined) writeFileSync(out, report);
process.stdout.write(report);
if (args.only === undefined) log(`written to ${out}`);
