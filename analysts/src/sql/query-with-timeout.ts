import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { CliContext } from '../cli/command.ts';
import type { SqlOutput } from './write-result.ts';

/**
 * `sql --timeout`: better-sqlite3 has no interrupt (sqlite3_interrupt is not exposed) and runs a
 * statement synchronously, so neither a timer nor a terminated worker thread can stop a query
 * inside one long SQLite step (an aggregate over a huge join returns its first row only at the
 * end). The query runs in a child process (query-process.ts) instead, its rows piped through, and
 * the child is killed (SIGKILL) when the time is up: its connection is read-only, so nothing is
 * left half-done, and its read transaction ends with it (the WAL can be recycled again).
 */

const QUERY_PROCESS = fileURLToPath(new URL('./query-process.ts', import.meta.url));

export interface QueryRequest {
  /** The file, already checked by the caller (open-source.ts). */
  readonly path: string;
  readonly sql: string;
  readonly output: SqlOutput;
}

export class QueryTimeoutError extends Error {
  override readonly name = 'QueryTimeoutError';
}

export async function queryWithTimeout(
  request: QueryRequest,
  timeoutS: number,
  context: CliContext,
): Promise<void> {
  const out = context.stdout;
  const child = spawn(process.execPath, [QUERY_PROCESS], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: context.env,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutS * 1000);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 64 * 1024) stderr += text;
  });
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  // A child that dies before reading its request (killed) must not fail the write.
  child.stdin.on('error', () => {});
  child.stdin.end(JSON.stringify(request));
  try {
    for await (const chunk of child.stdout) {
      if (!out.write(chunk)) await once(out, 'drain');
    }
    const [code, signal] = await exited;
    if (timedOut) {
      throw new QueryTimeoutError(
        `the query ran longer than --timeout ${timeoutS} s and was stopped (nothing was changed); run long queries on a snapshot (pda projections snapshot) with a larger --timeout, or --timeout 0 for no limit`,
      );
    }
    if (code !== 0) throw new Error(stderr.trim() || `the query process ended with ${signal ?? code}`);
    if (stderr !== '') context.stderr.write(stderr);
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
