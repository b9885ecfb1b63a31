/**
 * Many change-feed followers on one api process (NOT a test; issue 37, item 4).
 *
 *   bash dev-world/stack/stack.sh up
 *   pnpm --filter @pda/bench exec node api/followers.ts [--ns 100,1000,2000,5000] [--seconds 30] [--rate 20]
 *        [--companies 10] [--keys 20] [--wait 20] [--nofile N] [--addresses 2-250] [--out FILE]
 *
 * On the running native stack, through the shipped connector:
 *   1. `companies` new companies and `keys` keys (key k reads company k mod companies) are written
 *      to PostgreSQL; an ingest worker in its own process (api/parts/followers-ingest-child.ts, a
 *      new group into a fresh data directory) catches up with the topics, keys and companies included;
 *   2. per N: the api (api/src/main.ts) in its own process on that directory, its held-request and
 *      stream bounds raised to N (api/parts/followers-api.ts), and N followers in this process, each
 *      on its own connection from 127.0.0.x (x spread over --addresses): half long polls (`wait`),
 *      half live NDJSON streams (api/parts/followers-clients.ts), spread over the keys;
 *   3. `rate` marker sites a second for `seconds`, spread over the companies
 *      (api/parts/followers-writer.ts); each follower records when each marker of its company
 *      reached it; commit → follower p50/p99/max per kind, and the api's RSS, heap, descriptors,
 *      held requests and CPU over the window (/proc and its /metrics).
 * The descriptor limit of this process (`prlimit --pid`) and of the api (`prlimit` as its launcher)
 * is set to --nofile, by default the hard limit this process has (only CAP_SYS_RESOURCE raises it
 * above). The api accepts at most min(2,048, limit ÷ 2) − 40 connections whatever the limit
 * (api/src/connections/descriptor-plan.ts): beyond that, followers are closed on arrival and retry.
 * Writes results/followers-<date>.md (--out) and prints the same figures as JSON.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { stackDir } from '@pda/dev-world/stack';
import { issueApiKey } from '@pda/operator-tools/keys';
import pg from 'pg';
import { codeState, machine } from '../shared/machine.ts';
import { repoRoot, resultsDir } from '../shared/paths.ts';
import { cpuBetween, sampleCpu } from '../shared/process-cpu.ts';
import { nofileLimit, processStats } from '../shared/process-stats.ts';
import { readStackEnv, stackEnvFile, stackPgPool } from '../shared/stack-env.ts';
import { followerSettings, startFollowersApi } from './parts/followers-api.ts';
import { type Follower, newCounts, startFollower } from './parts/followers-clients.ts';
import { type FollowerKind, mostPerAddress, planFollowers, summarize } from './parts/followers-plan.ts';
import { type CaseResult, type KindResult, renderReport } from './parts/followers-report.ts';
import { type Marker, writeMarkers } from './parts/followers-writer.ts';

const { values: args } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    ns: { type: 'string', default: '100,1000,2000,5000' },
    seconds: { type: 'string', default: '30' },
    rate: { type: 'string', default: '20' },
    companies: { type: 'string', default: '10' },
    keys: { type: 'string', default: '20' },
    wait: { type: 'string', default: '20' },
    // Default: the hard limit this process was given (raising the hard limit needs CAP_SYS_RESOURCE).
    nofile: { type: 'string' },
    addresses: { type: 'string', default: '2-250' },
    out: { type: 'string' },
  },
});
const NS = (args.ns ?? '').split(',').map(Number);
const SECONDS = Number(args.seconds);
const RATE = Number(args.rate);
const COMPANIES = Number(args.companies);
const KEYS = Number(args.keys);
const WAIT_S = Number(args.wait);
const HARD_NOFILE = nofileLimit().hard;
const NOFILE = Number(args.nofile ?? (HARD_NOFILE === 'unlimited' ? 1_048_576 : HARD_NOFILE));
const [FIRST_ADDRESS = 2, LAST_ADDRESS = 250] = (args.addresses ?? '').split('-').map(Number);
/** After the last commit, how long the followers get to receive it. */
const TAIL_MS = 15_000;
const log = (line: string) => process.stderr.write(`followers: ${line}\n`);
const nowMs = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number) => Math.round(x * 100) / 100;

/** The ingest worker in its own process; resolves once it has caught up with the topics. */
async function startIngest(options: { group: string; prefix: string; dataDir: string }) {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, 'bench/api/parts/followers-ingest-child.ts'),
      '--group',
      options.group,
      '--prefix',
      options.prefix,
      '--data-dir',
      options.dataDir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('FOLLOWERS-INGEST caught-up')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`ingest exited (${code}) before it caught up`)));
  });
  return {
    pid: child.pid ?? 0,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Until each key reads its company's feed (the key and the company file reached the api). */
async function untilKeysAnswer(base: string, keys: readonly string[]): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (const key of keys) {
    for (;;) {
      const response = await fetch(`${base}/v1/changes?filter[type]=sites&limit=1`, {
        headers: { authorization: `Bearer ${key}` },
      });
      await response.arrayBuffer();
      if (response.status === 200) break;
      if (Date.now() > deadline) throw new Error(`a key still answers ${response.status} after 120 s`);
      await sleep(200);
    }
  }
}

async function main() {
  const loadAtStart = loadavg();
  // The followers' sockets are this process's descriptors: raise its own limit (prlimit on a
  // running process, as `ulimit -n` would for a shell). Above the hard limit only with
  // CAP_SYS_RESOURCE: without it prlimit fails, and so does the run.
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${NOFILE}:${NOFILE}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const env = readStackEnv();
  if (!env.PDA_PG_HOST)
    throw new Error(`no ${stackEnvFile()}: start the stack (bash dev-world/stack/stack.sh up)`);
  const pool = stackPgPool(8);
  const run = `fo${Date.now().toString(36)}`;

  // ---- companies and keys, through the pipeline like any ----
  const companyIds: string[] = [];
  for (let c = 0; c < COMPANIES; c++) {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO companies (name, currency) VALUES ($1, 'EUR') RETURNING id`,
      [`followers ${run} ${c}`],
    );
    companyIds.push(rows[0]?.id as string);
  }
  const keys: { id: string; key: string }[] = [];
  const db = await pool.connect();
  try {
    for (let k = 0; k < KEYS; k++) {
      const issued = await issueApiKey(db, {
        companyIds: [companyIds[k % COMPANIES] as string],
        name: `bench followers ${run} ${k}`,
        scopes: ['sites:read'],
      });
      keys.push({ id: issued.id, key: issued.key });
    }
  } finally {
    db.release();
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'bench-followers-'));
  const caughtUpStart = performance.now();
  const ingest = await startIngest({
    group: `${run}-ingest`,
    prefix: env.PDA_TOPIC_PREFIX ?? 'pda',
    dataDir,
  });
  log(`ingest caught up in ${Math.round(performance.now() - caughtUpStart)} ms`);

  const cases: CaseResult[] = [];
  const settingsByN: Record<string, Record<string, string>> = {};
  try {
    for (const n of NS) cases.push(await runCase(n));
  } finally {
    await ingest.stop();
    const cleanup = await pool.connect();
    try {
      await cleanup.query('DELETE FROM sites WHERE company_id = ANY($1::uuid[])', [companyIds]);
      await cleanup.query('DELETE FROM api_keys WHERE id = ANY($1::uuid[])', [keys.map((k) => k.id)]);
      await cleanup.query('DELETE FROM companies WHERE id = ANY($1::uuid[])', [companyIds]);
    } finally {
      cleanup.release();
    }
    await pool.end();
    rmSync(dataDir, { recursive: true, force: true });
  }

  async function runCase(n: number): Promise<CaseResult> {
    const settings = followerSettings(n, KEYS);
    settingsByN[String(n)] = settings;
    const api = await startFollowersApi({ dataDir, nofile: NOFILE, settings });
    const plan = planFollowers({
      followers: n,
      keys: KEYS,
      companies: COMPANIES,
      firstAddress: FIRST_ADDRESS,
      lastAddress: LAST_ADDRESS,
    });
    const prefix = `${run}n${n}-`;
    const counts = newCounts();
    const followers: Follower[] = [];
    const seen = plan.map(() => new Map<string, number>());
    try {
      await untilKeysAnswer(
        api.server.base,
        keys.map((k) => k.key),
      );
      log(`N=${n}: api ready; ${mostPerAddress(plan)} followers at most per address; connecting`);
      // A hundred at a time: a burst of thousands of SYNs overflows the listen backlog.
      for (const f of plan) {
        followers.push(
          startFollower({
            base: api.server.base,
            apiKey: keys[f.key]?.key as string,
            plan: f,
            waitSeconds: WAIT_S,
            counts,
            nowMs,
            onName: (name, at) => {
              const mine = seen[f.index] as Map<string, number>;
              if (name.startsWith(prefix) && !mine.has(name)) mine.set(name, at);
            },
          }),
        );
        if (f.index % 100 === 99) await sleep(50);
      }
      // Every follower in, or none more for 5 s (beyond the api's connection bound the rest never get in).
      const establishDeadline = Date.now() + 60_000;
      let last = { count: -1, at: Date.now() };
      while (Date.now() < establishDeadline && Date.now() - last.at < 5_000) {
        const count = followers.filter((f) => f.established()).length;
        if (count === followers.length) break;
        if (count !== last.count) last = { count, at: Date.now() };
        await sleep(250);
      }
      await sleep(2_000); // every long poll held, every stream caught up
      const established = followers.filter((f) => f.established()).length;
      log(`N=${n}: ${established} followers established; writing ${RATE}/s for ${SECONDS} s`);

      // ---- the write window, sampled every second ----
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const peaks = {
        rssMb: 0,
        heapUsedMb: null as number | null,
        openFds: 0,
        heldRequests: null as number | null,
      };
      const take = async () => {
        const s = await api.sample().catch(() => undefined);
        if (!s) return;
        peaks.rssMb = Math.max(peaks.rssMb, s.rssMb);
        peaks.openFds = Math.max(peaks.openFds, s.openFds);
        if (s.heapUsedMb !== null) peaks.heapUsedMb = Math.max(peaks.heapUsedMb ?? 0, s.heapUsedMb);
        if (s.heldRequests !== null) peaks.heldRequests = Math.max(peaks.heldRequests ?? 0, s.heldRequests);
      };
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          await take();
          await sleep(1_000);
        }
      })();
      const stack = stackDir();
      const cpu0 = {
        stack: sampleCpu(stack),
        api: processStats(api.server.pid).cpuSeconds,
        ingest: processStats(ingest.pid).cpuSeconds,
      };
      const windowStart = nowMs();
      const markers = new Map<string, Marker>();
      const writeRun = `${run}n${n}`;
      const written = await writeMarkers({
        pool,
        companyIds,
        run: writeRun,
        rate: RATE,
        seconds: SECONDS,
        markers,
        nowMs,
      });
      // Every established follower has every marker of its company, or the tail is over.
      const expectedFor = (company: number) =>
        [...markers.entries()].filter(([, m]) => m.company === company).map(([name]) => name);
      const byCompany = companyIds.map((_, c) => expectedFor(c));
      const complete = () =>
        followers.every(
          (f) =>
            !f.established() ||
            (byCompany[f.plan.company] ?? []).every((name) => seen[f.plan.index]?.has(name)),
        );
      const tailDeadline = nowMs() + TAIL_MS;
      while (nowMs() < tailDeadline && !complete()) await sleep(100);
      const windowSeconds = (nowMs() - windowStart) / 1000;
      const cpu1 = {
        stack: sampleCpu(stack),
        api: processStats(api.server.pid).cpuSeconds,
        ingest: processStats(ingest.pid).cpuSeconds,
      };
      sampling = false;
      await sampler;
      loop.disable();

      const kinds: KindResult[] = (['long-poll', 'live-stream'] as FollowerKind[]).map((kind) => {
        const ofKind = followers.filter((f) => f.plan.kind === kind);
        const latencies: number[] = [];
        let missed = 0;
        for (const f of ofKind) {
          if (!f.established()) continue;
          const mine = seen[f.plan.index] as Map<string, number>;
          for (const name of byCompany[f.plan.company] ?? []) {
            const at = mine.get(name);
            const committed = markers.get(name)?.committedAt;
            if (at === undefined) missed += 1;
            else if (committed !== undefined) latencies.push(at - committed);
          }
        }
        return {
          kind,
          followers: ofKind.length,
          established: ofKind.filter((f) => f.established()).length,
          missed,
          latency: summarize(latencies),
        };
      });
      const spent = cpuBetween(cpu0.stack, cpu1.stack);
      const cores = (seconds: number) => round(seconds / windowSeconds);
      const result: CaseResult = {
        asked: n,
        kinds,
        markers: written.written,
        writeSeconds: round(written.seconds),
        api: {
          peakRssMb: peaks.rssMb,
          peakHeapUsedMb: peaks.heapUsedMb,
          peakOpenFds: peaks.openFds,
          peakHeldRequests: peaks.heldRequests,
          cores: cores(cpu1.api - cpu0.api),
        },
        otherCores: {
          ingest: cores(cpu1.ingest - cpu0.ingest),
          bench: cores(spent.bench),
          postgres: cores(spent.postgres),
          kafka: cores(spent.kafka),
          connect: cores(spent.connect),
        },
        benchLoopDelayP99Ms: loop.percentile(99) / 1e6,
        refusals: await api.refusals(),
        clientErrors: { ...counts.errors },
        statuses: { ...counts.statuses },
      };
      log(
        `N=${n}: ${JSON.stringify(kinds.map((k) => ({ kind: k.kind, established: k.established, ...k.latency, missed: k.missed })))}`,
      );
      return result;
    } finally {
      for (const f of followers) f.stop();
      await Promise.all(followers.map((f) => f.done));
      await api.server.stop();
    }
  }

  const date = new Date().toISOString().slice(0, 10);
  const inputs = {
    ns: NS,
    seconds: SECONDS,
    markersPerSecond: RATE,
    companies: COMPANIES,
    keys: KEYS,
    kinds: 'half long polls (wait), half live NDJSON streams, alternating per round of keys',
    longPollWaitSeconds: WAIT_S,
    clientAddresses: `127.0.0.${FIRST_ADDRESS}..127.0.0.${LAST_ADDRESS}`,
    nofile: NOFILE,
    tailSeconds: TAIL_MS / 1000,
  };
  const doc = {
    date,
    command: `node api/followers.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      ...machine(loadAtStart, { soft: NOFILE, hard: NOFILE, via: 'prlimit' }),
      code: codeState(repoRoot),
    },
    inputs,
    settings: settingsByN,
    cases,
  };
  const out = args.out ?? join(resultsDir, `followers-${date}.md`);
  writeFileSync(out, renderReport(doc));
  log(`wrote ${out}`);
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`benchmark failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
