// What a fault case reads of a process it starts: its stdout line by line, the end of its stderr
// (to say why when it exits unexpectedly), whether it still runs, and its exit.
import type { ChildProcess } from 'node:child_process';

export interface ChildOutput {
  /** The last 4,000 characters of stderr. */
  stderr(): string;
  alive(): boolean;
  /** Resolves once the process has exited (at once when it has). */
  exited(): Promise<void>;
}

/** Calls `onLine` with each complete line of `child`'s stdout and keeps the end of its stderr. */
export function watchChild(child: ChildProcess, onLine: (line: string) => void): ChildOutput {
  let pending = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) onLine(part);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4_000);
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    stderr: () => stderr,
    alive,
    exited: () =>
      alive() ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : Promise.resolve(),
  };
}
