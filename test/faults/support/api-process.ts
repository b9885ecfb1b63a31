// The api as the operator runs it: a child process of `api/src/main.ts`, ready once Fastify logs
// that it listens. Several may share one port with API_REUSE_PORT=true (SO_REUSEPORT).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, waitFor } from '../../src/stack-env.ts';

export interface ApiProcess {
  readonly child: ChildProcess;
  alive(): boolean;
  /** Resolves once the public port listens. */
  ready(): Promise<void>;
  /** SIGTERM: stop accepting, finish in-flight requests, exit. Resolves with the exit code. */
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

export function startApi(env: Record<string, string>): ApiProcess {
  const child = spawn(process.execPath, ['src/main.ts'], {
    env: { ...process.env, API_ADMIN_PORT: '0', API_LOG_LEVEL: 'info', ...env },
    cwd: join(repoRoot, 'api'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let listening = false;
  let pending = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    // One line per request at info: only the start-up line matters here.
    if (!listening && parts.some((l) => l.includes('Server listening at'))) listening = true;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const exited = () =>
    alive() ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : Promise.resolve();
  return {
    child,
    alive,
    async ready() {
      await waitFor(
        'the api listening',
        () => {
          if (!alive()) throw new Error(`api exited (${child.exitCode ?? child.signalCode}): ${stderr}`);
          return listening;
        },
        { timeoutMs: 60_000, intervalMs: 50 },
      );
    },
    async stop() {
      if (!alive()) return child.exitCode;
      child.kill('SIGTERM');
      await exited();
      return child.exitCode;
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited();
    },
  };
}
