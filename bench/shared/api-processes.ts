/**
 * Child processes of the api benchmark: the api and the peer servers each run in their own process
 * (node), so the load generator (autocannon, in the benchmark's process) never shares an
 * event loop with the server it measures. Each start is bounded in time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface Server {
  readonly base: string;
  /** Process id of the child (its CPU time is read from /proc by api/profile.ts). */
  readonly pid: number;
  /** The last 20,000 characters the child wrote (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `[launcher] node [nodeArgs] <file>` (Node runs the TypeScript itself); ready when
 * `ready(base)` resolves true (polled, ≤ 60 s). A launcher must exec node in its own process (e.g.
 * `prlimit --nofile=N:N`), so `pid` is node's.
 */
export async function startServer(
  name: string,
  file: string,
  port: number,
  env: Record<string, string>,
  ready: (base: string, output: () => string) => Promise<boolean>,
  nodeArgs: readonly string[] = [],
  launcher: readonly string[] = [],
): Promise<Server> {
  let output = '';
  const argv = [...launcher, process.execPath, ...nodeArgs, file];
  const child: ChildProcess = spawn(argv[0] ?? process.execPath, argv.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${name} exited (${child.exitCode}): ${output.slice(-2_000)}`);
    if (await ready(base, () => output).catch(() => false))
      return { base, pid: child.pid ?? 0, output: () => output, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} not ready within 60 s: ${output.slice(-2_000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const printedReady = async (_base: string, output: () => string) => output().includes('ready');

export const answersHealth = async (base: string) => (await fetch(`${base}/v1/health`)).status === 200;

/**
 * The environment of an api process under benchmark on `port`, serving `dataDir`: loopback, an
 * ephemeral admin port, a fresh cursor secret, a rate limit out of the way, log level warn;
 * `overrides` win.
 */
export function benchApiEnv(
  dataDir: string,
  port: number,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    API_DATA_DIR: dataDir,
    API_HOST: '127.0.0.1',
    API_PORT: String(port),
    API_ADMIN_PORT: '0',
    API_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    API_CURSOR_SECRET: randomBytes(32).toString('hex'),
    API_RATE_LIMIT_MAX: '1000000000',
    API_LOG_LEVEL: 'warn',
    ...overrides,
  };
}
