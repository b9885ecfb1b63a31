import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Saturates the machine's CPU with busy-loop processes, one per core plus one, so a test can check
 * a promise that must hold when the process under test gets only a share of a core (its timers fire
 * late, its accept queue and socket buffers fill while its loop waits). Each child also stops by
 * itself after `maxMs`, so none outlives a test process that dies before calling the returned stop.
 */
export function saturateCpu(options: { maxMs?: number; processes?: number } = {}): () => Promise<void> {
  const maxMs = options.maxMs ?? 60_000;
  const count = options.processes ?? availableParallelism() + 1;
  const children: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${maxMs}; while (Date.now() < end);`], {
      stdio: 'ignore',
    }),
  );
  return async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  };
}
