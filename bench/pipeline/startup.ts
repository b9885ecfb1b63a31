/**
 * Start-up time and memory of both deployables (not a test).
 *
 *   pnpm --filter @pda/bench exec node pipeline/startup.ts [--runs 5]
 *        [--node /path/to/node] [--repo /path/to/checkout] [--loader strip|tsx]
 *
 * Each run starts a deployable as its start script does (`node src/main.ts`, or with
 * `--loader tsx` the `tsx` CLI of that checkout — how the deployables started before Node 24),
 * measures the time from spawn until it answers (api: GET /v1/version; ingest: GET /healthz on its
 * admin port, the first thing it serves, before it connects to Kafka) and the resident memory of
 * the whole process tree (the tsx CLI runs the program in a child process) at that moment and
 * after 3 s idle, then stops it with SIGTERM. Ingest consumes the running stack's topics with a
 * fresh group into a temporary data directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@pda/projections/testing';
import { repoRoot } from '../shared/paths.ts';
import { kafkaBrokers } from '../shared/stack-env.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    node: { type: 'string', default: process.execPath },
    repo: { type: 'string', default: repoRoot },
    loader: { type: 'string', default: 'strip' },
  },
});
const runs = Number(args.runs);
const loader = args.loader === 'tsx' ? 'tsx' : 'strip';

interface Sample {
  readyMs: number;
  rssAtReadyMiB: number;
  rssSettledMiB: number;
}

/** Resident memory of `pid` and all its descendants, in MiB (from /proc). */
function treeRssMiB(pid: number): number {
  let kib = 0;
  const visit = (p: number) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      kib += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        for (const child of children ? children.split(' ') : []) visit(Number(child));
      }
    } catch {
      // the process exited meanwhile
    }
  };
  visit(pid);
  return Math.round((kib / 1024) * 10) / 10;
}

function command(packageDir: string, nodeFlags: readonly string[]): string[] {
  const main = join(packageDir, 'src', 'main.ts');
  if (loader === 'tsx')
    return [join(args.repo, 'node_modules', 'tsx', 'dist', 'cli.mjs'), ...nodeFlags, main];
  return [...nodeFlags, main];
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(500) });
    return true;
  } catch {
    return false;
  }
}

async function measure(
  name: string,
  argv: string[],
  env: Record<string, string>,
  url: string,
): Promise<Sample> {
  const started = performance.now();
  const child: ChildProcess = spawn(args.node, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  try {
    const deadline = started + 60_000;
    while (!(await answers(url))) {
      if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
      if (performance.now() > deadline) throw new Error(`${name} did not answer within 60 s: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = performance.now() - started;
    const pid = child.pid ?? 0;
    const rssAtReadyMiB = treeRssMiB(pid);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return { readyMs: Math.round(readyMs), rssAtReadyMiB, rssSettledMiB: treeRssMiB(pid) };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

async function api(): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pda-startup-api-'));
  const port = await freePort();
  try {
    return await measure(
      'api',
      command(join(args.repo, 'api'), []),
      {
        API_DATA_DIR: dataDir,
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
        API_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        API_CURSOR_SECRET: randomBytes(32).toString('hex'),
        API_LOG_LEVEL: 'warn',
      },
      `http://127.0.0.1:${port}/v1/version`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function ingest(): Promise<Sample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pda-startup-ingest-'));
  const port = await freePort();
  const group = `pda-startup-${randomBytes(4).toString('hex')}`;
  try {
    return await measure(
      'ingest',
      command(join(args.repo, 'ingest'), ['--max-semi-space-size=64']),
      {
        INGEST_KAFKA_BROKERS: kafkaBrokers().join(','),
        INGEST_DATA_DIR: dataDir,
        INGEST_GROUP_ID: group,
        INGEST_CLIENT_ID: group,
        INGEST_ADMIN_PORT: String(port),
        INGEST_LOG_LEVEL: 'warn',
      },
      `http://127.0.0.1:${port}/healthz`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function summary(samples: Sample[]) {
  const pick = (key: keyof Sample) => {
    const values = samples.map((s) => s[key]);
    return { min: Math.min(...values), median: median(values), max: Math.max(...values) };
  };
  return {
    readyMs: pick('readyMs'),
    rssAtReadyMiB: pick('rssAtReadyMiB'),
    rssSettledMiB: pick('rssSettledMiB'),
  };
}

const nodeVersion = await new Promise<string>((resolve) => {
  const child = spawn(args.node, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.on('exit', () => resolve(out.trim()));
});

const results: Record<string, Sample[]> = { api: [], ingest: [] };
for (let run = 0; run < runs; run++) {
  results.api?.push(await api());
  results.ingest?.push(await ingest());
}
process.stdout.write(
  `${JSON.stringify(
    {
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model,
        load: readFileSync('/proc/loadavg', 'utf8').trim(),
      },
      inputs: { node: nodeVersion, loader, repo: args.repo, runs },
      api: summary(results.api ?? []),
      ingest: summary(results.ingest ?? []),
    },
    null,
    2,
  )}\n`,
);
