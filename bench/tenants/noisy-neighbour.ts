/**
 * Noisy-neighbour benchmark (NOT a test; bench/README.md, "noisy neighbour"; issue 34's proof): a
 * victim key of one company reads plain pages one at a time, first alone, then while a hostile
 * key of another company runs concurrent loops of the heaviest request shapes, against one api
 * process with every production plugin. Measures the victim's latency and refusals, the hostile
 * key's answers by code, the api's event-loop delay (admin /metrics) and CPU (/proc) per phase.
 *
 *   pnpm --filter @pda/bench exec node tenants/noisy-neighbour.ts [--hostile-sites 1000000]
 *     [--victim-sites 10000] [--quiet 30] [--loaded 60] [--shape-seconds 15] [--loops 12]
 *     [--held 40] [--wait 5] [--skip-turns-off] [--skip-caps-off] [--api-cpus 0]
 *     [--also-node-options=--max-semi-space-size=64] [--also-env API_READ_THREADS=2]
 *     [--before-repo /path/to/checkout]
 *     [--out results/<file>.md]
 *
 * Inputs: bench/tenants/parts/noisy-neighbour-fixture.ts (built once, cached under .data/bench/). Phases, on an
 * api with the default fair shares: quiet-1 (victim alone), loaded (the hostile mix), quiet-2,
 * then each hostile shape alone with the victim (--shape-seconds 0 skips them); then, unless
 * --skip-turns-off, a second api process with API_FAIR_TURNS=false (the peer of the turns:
 * api/src/rate-limit/key-turns.ts), and unless --skip-caps-off a third with the turns on and
 * API_MAX_IN_PROGRESS_PER_KEY=0 and API_MAX_IN_PROGRESS_PER_COMPANY=0: quiet, loaded and quiet
 * again on each. Both keys get a rate limit out of the way (API_RATE_LIMIT_MAX 10^9), so the fair
 * shares, not the rate, bound the hostile key. Writes bench/results/noisy-neighbour-<date>.md (or
 * --out, relative to bench/) and prints it.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { answersHealth, benchApiEnv, type Server, startServer } from '../shared/api-processes.ts';
import { codeState, machine } from '../shared/machine.ts';
import { benchDir, repoRoot, resultsDir } from '../shared/paths.ts';
import { processStats } from '../shared/process-stats.ts';
import { noisyFixture } from './parts/noisy-neighbour-fixture.ts';
import {
  type HostileLoad,
  type HostileUrls,
  runHostile,
  SHAPES,
  shapeRequests,
} from './parts/noisy-neighbour-hostile.ts';
import { httpClient, nextLink } from './parts/noisy-neighbour-http.ts';
import { type MetricsSample, refusalsBetween, scrapeMetrics } from './parts/noisy-neighbour-metrics.ts';
import { type PhaseResult, renderNoisyReport, type ShapeCheck } from './parts/noisy-neighbour-report.ts';
import type { VictimMessage, VictimPhase, VictimReport } from './parts/noisy-neighbour-victim.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    'hostile-sites': { type: 'string', default: '1000000' },
    'victim-sites': { type: 'string', default: '10000' },
    quiet: { type: 'string', default: '30' },
    loaded: { type: 'string', default: '60' },
    'shape-seconds': { type: 'string', default: '15' },
    loops: { type: 'string', default: '12' },
    held: { type: 'string', default: '40' },
    wait: { type: 'string', default: '5' },
    'skip-turns-off': { type: 'boolean', default: false },
    'skip-caps-off': { type: 'boolean', default: false },
    'api-cpus': { type: 'string' },
    'also-node-options': { type: 'string' },
    'also-env': { type: 'string', multiple: true },
    'before-repo': { type: 'string' },
    out: { type: 'string' },
  },
});
const number = (name: keyof typeof args, min: number) => {
  const value = Number(args[name]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}`);
  return value;
};
const hostileSites = number('hostile-sites', 10_000);
const victimSites = number('victim-sites', 100);
const quietSeconds = number('quiet', 5);
const loadedSeconds = number('loaded', 5);
const shapeSeconds = number('shape-seconds', 0);
const loops = number('loops', 1);
// One connection per loop and per held poll, from one address: below the api's 64 per address.
const held = number('held', 0);
if (loops + held > 60)
  throw new Error('--loops + --held must stay below API_MAX_CONNECTIONS_PER_ADDRESS (64)');
const waitSeconds = number('wait', 1);
const repo = repoRoot;
const log = (line: string) => process.stderr.write(`noisy-neighbour: ${line}\n`);
/** The api's default API_UPDATED_SINCE_OVERLAP_MS: a since is sent this much after the time it must match. */
const OVERLAP_MS = 60_000;

// --api-cpus 0: the api on those CPUs (taskset), this process and the victim's on the others, so
// that the load generators' own CPU (parsing every page they get) does not take the api's cores,
// as when partners call from their own machines. Without it everything shares every core.
const apiCpus = args['api-cpus'];
const apiLauncher: string[] = [];
if (apiCpus !== undefined) {
  const pinned = new Set(apiCpus.split(',').map(Number));
  const others = Array.from({ length: cpus().length }, (_, cpu) => cpu).filter((cpu) => !pinned.has(cpu));
  if (others.length === 0 || [...pinned].some((cpu) => !Number.isInteger(cpu) || cpu >= cpus().length))
    throw new Error(
      `--api-cpus ${apiCpus}: name CPUs below ${cpus().length}, leaving at least one for the clients`,
    );
  execFileSync('taskset', ['-a', '-pc', others.join(','), String(process.pid)], { stdio: 'ignore' });
  apiLauncher.push('taskset', '-c', apiCpus);
}

const loadAtStart = loadavg();
const code = codeState(repo);
log(
  `inputs: hostile ${hostileSites} sites, victim ${victimSites} (built once, then cached under .data/bench/)`,
);
const fixture = await noisyFixture(join(repo, '.data', 'bench'), hostileSites, victimSites);
log(`fixture ready (${fixture.buildSeconds} s when built)`);

const mix: HostileLoad = { shapes: SHAPES, loops, held, waitSeconds };
const results: PhaseResult[] = [];
const checks: ShapeCheck[] = [];
const apis: { label: string; env: Record<string, string>; perShape: boolean; repo?: string }[] = [
  { label: 'turns on, caps 8 / 16 / 100', env: {}, perShape: shapeSeconds > 0 },
];
// A peer with V8 flags for the api (e.g. "--max-semi-space-size=64"), after the default api.
if (args['also-node-options'] !== undefined)
  apis.push({
    label: `turns on, NODE_OPTIONS=${args['also-node-options']}`,
    env: { NODE_OPTIONS: args['also-node-options'] },
    perShape: false,
  });
// A peer api with settings of its own (e.g. "API_READ_THREADS=2"; repeat the option for several).
const alsoEnv = args['also-env'] ?? [];
if (alsoEnv.length > 0)
  apis.push({
    label: `turns on, ${alsoEnv.join(' ')}`,
    env: Object.fromEntries(
      alsoEnv.map((setting) => {
        const at = setting.indexOf('=');
        if (at < 1) throw new Error(`--also-env takes NAME=VALUE, not ${setting}`);
        return [setting.slice(0, at), setting.slice(at + 1)];
      }),
    ),
    perShape: false,
  });
// The peer of a change: the same default api from another checkout (its own `pnpm install`), on
// the same inputs, each shape alone too.
const beforeRepo = args['before-repo'] === undefined ? undefined : resolve(args['before-repo']);
if (beforeRepo !== undefined)
  apis.push({
    label: `before (${codeState(beforeRepo).commit})`,
    env: {},
    perShape: shapeSeconds > 0,
    repo: beforeRepo,
  });
if (!args['skip-turns-off'])
  apis.push({ label: 'turns off, caps 8 / 16 / 100', env: { API_FAIR_TURNS: 'false' }, perShape: false });
if (!args['skip-caps-off'])
  apis.push({
    label: 'turns on, caps off (0 / 0 / 100)',
    env: { API_MAX_IN_PROGRESS_PER_KEY: '0', API_MAX_IN_PROGRESS_PER_COMPANY: '0' },
    perShape: false,
  });

for (const api of apis) {
  const port = await freePort();
  const adminPort = await freePort();
  log(`${api.label}: starting the api`);
  const server = await startServer(
    'api',
    join(api.repo ?? repo, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(fixture.dataDir, port, {
      API_CURSOR_SECRET: fixture.cursorSecret,
      API_ADMIN_PORT: String(adminPort),
      ...api.env,
    }),
    answersHealth,
    [],
    apiLauncher,
  );
  const victim = await startVictim(server.base, fixture.victim.key);
  const hostileClient = httpClient('127.0.0.2', loops, 35_000);
  const heldClient = httpClient('127.0.0.2', Math.max(1, held), (waitSeconds + 10) * 1000);
  try {
    const urls = await hostileUrls(server.base);
    if (checks.length === 0) checks.push(...(await checkShapes(urls)));
    const admin = `http://127.0.0.1:${adminPort}`;
    const phase = async (name: string, seconds: number, load: HostileLoad | undefined) => {
      log(`${api.label}: ${name} (${seconds} s)`);
      const start = await scrapeMetrics(admin); // resets the event-loop histogram
      const sample = cpuNow(server, victim.child);
      const loadStart = loadavg()[0] ?? 0;
      const at = performance.now();
      victim.mark(`${api.label}|${name}`);
      const tally = load
        ? await runHostile(hostileClient, heldClient, urls, load, at + seconds * 1000)
        : await new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), seconds * 1000));
      victim.mark(null);
      const wallSeconds = (performance.now() - at) / 1000;
      const end: MetricsSample = await scrapeMetrics(admin);
      const after = cpuNow(server, victim.child);
      results.push({
        api: api.label,
        name,
        wallSeconds,
        load,
        hostile: tally,
        metrics: end,
        refusals: refusalsBetween(start, end),
        loopThread: {
          run: (after.loop.run - sample.loop.run) / wallSeconds,
          wait: (after.loop.wait - sample.loop.wait) / wallSeconds,
        },
        cpuCores: {
          api: (after.api - sample.api) / wallSeconds,
          victim: (after.victim - sample.victim) / wallSeconds,
          hostile: (after.bench - sample.bench) / wallSeconds,
        },
        loadAverage: [loadStart, loadavg()[0] ?? 0],
        victim: { ms: [], refused: [], errors: [] },
      });
    };
    // Warm-up (not reported): the victim's pages and each hostile statement prepared once.
    await runHostile(
      hostileClient,
      heldClient,
      urls,
      { ...mix, loops: SHAPES.length, held: 0 },
      performance.now() + 3_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await phase('quiet-1', quietSeconds, undefined);
    await phase('loaded', loadedSeconds, mix);
    await phase('quiet-2', quietSeconds, undefined);
    if (api.perShape) {
      for (const shape of SHAPES)
        await phase(`only ${shape}`, shapeSeconds, { ...mix, shapes: [shape], held: 0 });
      await phase('only held', shapeSeconds, { ...mix, shapes: [], loops: 0 });
    }
    const phases = await victim.stop();
    for (const result of results) {
      if (result.api === api.label) result.victim = phases[`${api.label}|${result.name}`] ?? result.victim;
    }
  } finally {
    hostileClient.close();
    heldClient.close();
    victim.child.kill();
    await server.stop();
  }
}

const date = new Date().toISOString().slice(0, 10);
const report = renderNoisyReport({
  date,
  machine: machine(loadAtStart, 'inherited'),
  code,
  fixture,
  inputs: {
    quietSeconds,
    loadedSeconds,
    shapeSeconds,
    loops,
    held,
    waitSeconds,
    overlapMs: OVERLAP_MS,
    apiCpus: apiCpus ?? null,
  },
  apis: apis.map(({ label, env }) => ({ label, env })),
  checks,
  results,
});
const out =
  args.out === undefined ? join(resultsDir, `noisy-neighbour-${date}.md`) : resolve(benchDir, args.out);
writeFileSync(out, report);
// Every sample, for another look (not committed: .data/ is ignored).
const raw = join(
  repo,
  '.data',
  'bench',
  `noisy-neighbour-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
);
writeFileSync(raw, JSON.stringify({ fixture, checks, results }));
process.stdout.write(report);
log(`wrote ${out} and ${raw}`);

/** The hostile key's URLs on this api: the since, its ETag, and a feed position at the end. */
async function hostileUrls(base: string): Promise<HostileUrls> {
  const client = httpClient('127.0.0.2', 1, 60_000);
  const auth = { authorization: `Bearer ${fixture.hostile.key}` };
  try {
    const since = new Date(fixture.hostile.changedFromMs + OVERLAP_MS).toISOString();
    const first = await client.get(
      `${base}/v1/sites?sort=created_at&limit=200&filter[updated_since]=${since}`,
      auth,
    );
    const etag = first.headers.etag;
    if (first.status !== 200 || typeof etag !== 'string')
      throw new Error(
        `the since page answered ${first.status} (ETag ${String(etag)}): ${first.body.slice(0, 300)}`,
      );
    // A walk that matches nothing ends at once; its token lists what changes after now: the feed's end.
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const empty = await client.get(`${base}/v1/sites?limit=1&filter[updated_since]=${future}`, auth);
    const sync = (JSON.parse(empty.body) as { links: { sync?: string } }).links.sync;
    const token = sync === undefined ? null : new URL(sync).searchParams.get('sync');
    if (token === null) throw new Error(`no links.sync on the empty walk: ${empty.body.slice(0, 300)}`);
    // The first empty page is the position a follower waits at (before commit f811fd0 a token's
    // first feed page held the walk's last change again, so it is followed until empty).
    let heldUrl = `${base}/v1/changes?sync=${encodeURIComponent(token)}&limit=50`;
    for (let step = 0; ; step++) {
      const page = await client.get(heldUrl, auth);
      const body = JSON.parse(page.body) as { data: unknown[]; links: { next: string } };
      if (page.status !== 200 || step > 10) throw new Error(`the feed's end: ${page.body.slice(0, 300)}`);
      if (body.data.length === 0) break;
      heldUrl = body.links.next;
    }
    return { base, key: fixture.hostile.key, since, syncPath: fixture.hostile.syncPath, etag, heldUrl };
  } finally {
    client.close();
  }
}

/** Each shape once, on a quiet api: what it answers, how many rows, in how long. */
async function checkShapes(urls: HostileUrls): Promise<ShapeCheck[]> {
  const client = httpClient('127.0.0.2', 1, 60_000);
  const auth = { authorization: `Bearer ${urls.key}` };
  const checked: ShapeCheck[] = [];
  try {
    for (const [shape, request] of Object.entries(shapeRequests(urls))) {
      const headers = request.method === 'OPTIONS' ? { ...request.headers } : { ...auth, ...request.headers };
      const discard = request.discard === true;
      const answer = await client.send(request.method ?? 'GET', request.first, headers, discard);
      // A stream's body is counted, not kept: a whole company's feed (its rows are not a page's).
      const page =
        answer.status === 200 && !discard ? (JSON.parse(answer.body) as { data: unknown[] }) : undefined;
      let secondRows: number | undefined;
      if (request.walk && page) {
        const next = nextLink(answer);
        if (next !== null) {
          const second = await client.get(next, auth);
          secondRows = (JSON.parse(second.body) as { data: unknown[] }).data.length;
        }
      }
      checked.push({ shape, status: answer.status, rows: page?.data.length, secondRows, ms: answer.ms });
    }
    const at = performance.now();
    const answer = await client.get(`${urls.heldUrl}&wait=1`, auth);
    const rows = (JSON.parse(answer.body) as { data: unknown[] }).data.length;
    checked.push({
      shape: 'held',
      status: answer.status,
      rows,
      secondRows: undefined,
      ms: performance.now() - at,
    });
  } finally {
    client.close();
  }
  return checked;
}

/**
 * /proc/<pid>/schedstat of a process's main thread (the event loop): seconds on a CPU and seconds
 * runnable but waiting for one (the other agents' work on the shared cores shows there).
 */
function schedstat(pid: number): { run: number; wait: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { run: (run ?? 0) / 1e9, wait: (wait ?? 0) / 1e9 };
}

function cpuNow(server: Server, child: ChildProcess) {
  const usage = process.cpuUsage();
  return {
    loop: schedstat(server.pid),
    api: processStats(server.pid).cpuSeconds,
    victim: child.pid === undefined ? 0 : processStats(child.pid).cpuSeconds,
    bench: (usage.user + usage.system) / 1e6,
  };
}

async function startVictim(base: string, key: string) {
  const child = fork(join(import.meta.dirname, 'parts', 'noisy-neighbour-victim.ts'), [base, key], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const reports: VictimReport[] = [];
  let wake: (() => void) | undefined;
  child.on('message', (message: VictimReport) => {
    reports.push(message);
    wake?.();
  });
  const next = async (): Promise<VictimReport> => {
    const deadline = Date.now() + 60_000;
    while (reports.length === 0) {
      if (child.exitCode !== null) throw new Error(`the victim exited (${child.exitCode})`);
      if (Date.now() > deadline) throw new Error('the victim did not answer within 60 s');
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      });
    }
    return reports.shift()!;
  };
  await next();
  const send = (message: VictimMessage) => child.send(message);
  return {
    child,
    mark: (phase: string | null) => send({ phase }),
    stop: async (): Promise<Record<string, VictimPhase>> => {
      send({ stop: true });
      const report = await next();
      if (!('phases' in report)) throw new Error('the victim answered no samples');
      return report.phases;
    },
  };
}
