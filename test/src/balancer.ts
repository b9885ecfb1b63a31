// The balancer and the shared rate-limit store of a replicated deployment, as real processes for a
// test: HAProxy (Debian package) on the configuration rendered from operator-tools/balancer/haproxy.cfg.template,
// and a private redis-server (Debian package) on a free port. Both are installed by scripts/test.sh.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BalancerNode, type NodePorts, renderHaproxyConfig } from '@pda/operator-tools/balancer';
import { freePort } from '@pda/projections/testing';
import { waitFor } from './stack-env.ts';

interface Process {
  readonly process: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

function run(name: string, command: string, args: string[], onLine?: (line: string) => void): Process {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let partial = '';
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-20_000);
    if (!onLine) return;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('error', (error) => {
    output += `\n${name}: ${error.message} (install the Debian package: scripts/test.sh does)`;
  });
  return {
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface Redis {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<Redis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pda-replica-redis-'));
  const redis = run('redis-server', 'redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await waitFor(
    'redis-server to listen',
    () => /Ready to accept connections/.test(redis.output()) || undefined,
    {
      timeoutMs: 15_000,
      intervalMs: 100,
    },
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${redis.output()}`);
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ServerState {
  readonly backend: string;
  readonly server: string;
  /** UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (going up), MAINT… */
  readonly status: string;
}

export interface Balancer {
  readonly url: string;
  readonly statsUrl: string;
  /** The backends' server states from HAProxy's stats page (CSV). */
  servers(): Promise<ServerState[]>;
  /** Requests HAProxy logged with at least one retry (the `rc` of ac/fc/bc/sc/rc; `+` = redispatched). */
  retried(): string[];
  /** HAProxy's state changes (servers going down or up), with the time they were read. */
  events(): string[];
  stop(): Promise<void>;
}

export async function startBalancer(options: {
  nodes: readonly BalancerNode[];
  ports: NodePorts;
  sourceAddress: string;
  /** Known before the nodes start: their API_PUBLIC_BASE_URL points at the balancer. */
  port: number;
}): Promise<Balancer> {
  const { port } = options;
  const statsPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pda-replica-haproxy-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(
    file,
    renderHaproxyConfig({
      bind: `127.0.0.1:${port}`,
      statsBind: `127.0.0.1:${statsPort}`,
      nodes: options.nodes,
      ports: options.ports,
      sourceAddress: options.sourceAddress,
    }),
  );
  // -db: foreground, logs on stdout (the template logs to stdout).
  const retried: string[] = [];
  const events: string[] = [];
  const haproxy = run('haproxy', 'haproxy', ['-db', '-f', file], (line) => {
    const request = / \d+\/\d+\/\d+\/\d+\/(\+?)(\d+) \d+\/\d+ "/.exec(line);
    if (request && (request[1] === '+' || Number(request[2]) > 0)) retried.push(line);
    // Each state change is logged twice (stderr warning and the log line): keep the log line.
    else if (!request && !line.startsWith('[') && /is (UP|DOWN)|has no server/.test(line)) {
      events.push(`${new Date().toISOString()} ${line}`);
    }
  });
  const statsUrl = `http://127.0.0.1:${statsPort}/stats`;
  await waitFor('haproxy to serve its stats page', async () => (await fetch(statsUrl)).ok, {
    timeoutMs: 15_000,
    intervalMs: 100,
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${haproxy.output()}`);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    statsUrl,
    async servers() {
      const csv = await (await fetch(`${statsUrl};csv`)).text();
      const [header, ...rows] = csv.trim().split('\n');
      const columns = (header ?? '').replace(/^# /, '').split(',');
      const at = (name: string) => columns.indexOf(name);
      return rows
        .map((row) => row.split(','))
        .filter((cells) => !['FRONTEND', 'BACKEND'].includes(cells[at('svname')] ?? ''))
        .map((cells) => ({
          backend: cells[at('pxname')] ?? '',
          server: cells[at('svname')] ?? '',
          status: cells[at('status')] ?? '',
        }));
    },
    retried: () => [...retried],
    events: () => [...events],
    stop: async () => {
      await haproxy.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
