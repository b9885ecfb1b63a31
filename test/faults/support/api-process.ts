// The api as the operator runs it: a child process of `api/src/main.ts`, ready once Fastify logs
// that it listens. Several may share one port with API_REUSE_PORT=true (SO_REUSEPORT).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot, waitFor } from '../../src/stack-env.ts';
import { watchChild } from './child-output.ts';

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
  // One line per request at info: only the start-up line matters here.
  const { stderr, alive, exited } = watchChild(child, (line) => {
    if (!listening && line.includes('Server listening at')) listening = true;
  });
  return {
    child,
    alive,
    async ready() {
      await waitFor(
        'the api listening',
        () => {
          if (!alive()) throw new Error(`api exited (${child.exitCode ?? child.signalCode}): ${stderr()}`);
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
