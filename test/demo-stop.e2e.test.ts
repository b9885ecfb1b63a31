import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@pda/projections/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './src/stack-env.ts';

// scripts/demo.sh stops the ingest and api it started when it is sent SIGTERM (README.md, Quick
// start): they run as `exec node …`, so the script's trap signals the servers themselves, not a
// pnpm that would leave them running. Needs the real stack (the demo starts ingest and api on it);
// each run has its own data directory, consumer group and ports, and issues one demo key.

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) {
    // Every process of a run that failed before its SIGTERM: the servers and whatever they started.
    for (const pid of processesOf(join(root, 'data'))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(root, { recursive: true, force: true });
  }
});

/**
 * The demo's ingest and api: the children of the script started with this data directory in their
 * environment (ingest's own children, such as the `sync` of its durability flush, inherit that
 * environment too, and come and go).
 */
function serversOf(dataDir: string, parent?: number): number[] {
  return processesOf(dataDir).filter((pid) => parent === undefined || parentOf(pid) === parent);
}

function parentOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Every process with this data directory in its environment. */
function processesOf(dataDir: string): number[] {
  const marks = [`INGEST_DATA_DIR=${dataDir}`, `API_DATA_DIR=${dataDir}`];
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (environ.some((variable) => marks.includes(variable))) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return pids;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function startDemo(): Promise<{
  demo: ChildProcess;
  dataDir: string;
  output: () => string;
  printed: (text: string, timeoutMs: number) => Promise<void>;
  exited: Promise<number | null>;
}> {
  const root = mkdtempSync(join(tmpdir(), 'pda-demo-stop-'));
  roots.push(root);
  const dataDir = join(root, 'data');
  const demo = spawn('bash', ['scripts/demo.sh'], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DEMO_DATA_DIR: dataDir,
      DEMO_API_PORT: String(await freePort()),
      DEMO_INGEST_ADMIN_PORT: String(await freePort()),
      DEMO_INGEST_GROUP_ID: `pda-demo-stop-${randomUUID()}`,
      // Passed through to the api the demo starts (another api may hold the default admin port).
      API_ADMIN_PORT: String(await freePort()),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  demo.stdout?.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  demo.stderr?.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  const exited = new Promise<number | null>((resolve) =>
    demo.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
  );
  const printed = async (text: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!output.includes(text)) {
      if (demo.exitCode !== null || Date.now() > deadline) {
        throw new Error(`demo.sh did not print ${JSON.stringify(text)}:\n${output.slice(-4000)}`);
      }
      await sleep(200);
    }
  };
  return { demo, dataDir, output: () => output, printed, exited };
}

describe('scripts/demo.sh and SIGTERM', () => {
  it('after printing how to call the api: SIGTERM stops its ingest and api (ingest drained), then it exits', async () => {
    const { demo, dataDir, output, printed, exited } = await startDemo();
    await printed('The pipeline is running', 540_000);
    const servers = serversOf(dataDir, demo.pid);
    expect(servers, output()).toHaveLength(2);
    // The servers are node itself, children of the script: no pnpm in between to swallow a signal.
    for (const pid of servers) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(argv[0]?.split('/').at(-1)).toBe('node');
      expect(argv).toContain('src/main.ts');
      expect(parentOf(pid)).toBe(demo.pid);
    }

    demo.kill('SIGTERM');
    const code = await exited;
    expect(code, output()).toBe(143);
    expect(output()).toContain('== stopping ingest and api');
    expect(servers.filter(alive)).toEqual([]);
    expect(serversOf(dataDir)).toEqual([]);
    // ingest was stopped by its own drain, not killed after the 20 s the script allows.
    expect(readFileSync(join(dataDir, 'ingest.log'), 'utf8')).toContain(
      'ingest stopped: drained and disconnected',
    );
  }, 600_000);

  it('while it waits for the data: SIGTERM stops its ingest and api too', async () => {
    const { demo, dataDir, output, printed, exited } = await startDemo();
    await printed('== waiting until the demo key and the data are projected', 300_000);
    let servers: number[] = [];
    for (let i = 0; i < 50 && servers.length < 2; i++) {
      servers = serversOf(dataDir, demo.pid);
      if (servers.length < 2) await sleep(100);
    }
    expect(servers, output()).toHaveLength(2);

    demo.kill('SIGTERM');
    expect(await exited, output()).toBe(143);
    expect(servers.filter(alive)).toEqual([]);
    expect(serversOf(dataDir)).toEqual([]);
  }, 600_000);
});
