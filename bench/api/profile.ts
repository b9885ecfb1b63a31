/**
 * Where the api's CPU goes on one request shape (NOT a test; companion of api/list.ts):
 *
 *   pnpm --filter @pda/bench exec node api/profile.ts [--sites 1000000] [--path '/v1/sites?limit=50']
 *     [--connections 10] [--duration 10] [--warmup 3] [--log-level warn]
 *     [--accept-encoding 'gzip, deflate, br']
 *
 * Starts the api (own process, production plugins, the cached api/list.ts fixture) under
 * `node --cpu-prof`, drives it with autocannon, then prints req/s, p99, the api process's CPU time
 * per request (from /proc: steadier than req/s on a shared machine, where the load generator and
 * other work take turns on the same cores) and the profile's breakdown. The .cpuprofile files stay
 * in .data/bench/profile-<time>/ (open them in Chrome DevTools or speedscope).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import autocannon from 'autocannon';
import { listFixture } from '../shared/api-fixture.ts';
import { answersHealth, startServer } from '../shared/api-processes.ts';
import { repoRoot } from '../shared/paths.ts';
import { summarise } from './parts/profile-summary.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    sites: { type: 'string', default: '1000000' },
    path: { type: 'string', default: '/v1/sites?limit=50' },
    connections: { type: 'string', default: '10' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    'log-level': { type: 'string', default: 'warn' },
    'accept-encoding': { type: 'string' },
  },
});

const repo = repoRoot;
const fixture = listFixture(join(repo, '.data', 'bench'), Number(args.sites));
const profileDir = join(repo, '.data', 'bench', `profile-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(profileDir, { recursive: true });
const port = await freePort();
const api = await startServer(
  'api',
  join(repo, 'api', 'src', 'main.ts'),
  port,
  {
    API_DATA_DIR: fixture.dataDir,
    API_HOST: '127.0.0.1',
    API_PORT: String(port),
    API_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    API_CURSOR_SECRET: randomBytes(32).toString('hex'),
    API_RATE_LIMIT_MAX: '1000000000',
    API_LOG_LEVEL: args['log-level'],
  },
  answersHealth,
  ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
);

/** User + system CPU time of a process in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const run = (duration: number) =>
  autocannon({
    url: `${api.base}${args.path}`,
    headers: {
      authorization: `Bearer ${fixture.key}`,
      ...(args['accept-encoding'] === undefined ? {} : { 'accept-encoding': args['accept-encoding'] }),
    },
    connections: Number(args.connections),
    duration,
  });

let line: string;
try {
  await run(Number(args.warmup));
  const before = cpuMs(api.pid);
  const result = await run(Number(args.duration));
  const used = cpuMs(api.pid) - before;
  const requests = result.requests.total;
  line =
    `${args.path}: ${Math.round(requests / Number(args.duration))} req/s, p99 ${result.latency.p99} ms, ` +
    `api CPU ${requests > 0 ? Math.round((used * 1000) / requests) : 0} µs/request, ` +
    `non-2xx ${result.non2xx}, log level ${args['log-level']}, ` +
    `accept-encoding ${args['accept-encoding'] ?? '(none)'}`;
} finally {
  await api.stop();
}

// The main thread's profile is the largest file (other threads write smaller ones).
const largest = readdirSync(profileDir)
  .map((name) => join(profileDir, name))
  .sort((a, b) => statSync(b).size - statSync(a).size)[0];
process.stdout.write(`${line}\n`);
if (largest) {
  const summary = summarise(largest);
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`\nprofile ${largest} (${Math.round(summary.totalMs)} ms sampled)\n`);
  process.stdout.write('parts of the request path (inclusive):\n');
  for (const part of summary.parts) process.stdout.write(`  ${pct(part.share)} ${part.label}\n`);
  process.stdout.write('most self time:\n');
  for (const entry of summary.self) process.stdout.write(`  ${pct(entry.share)} ${entry.name}\n`);
}
