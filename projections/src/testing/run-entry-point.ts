import { execFile } from 'node:child_process';

/**
 * Runs a deployable's entry point (`node <file>`) as its own process with only PATH and `env`, for
 * the process-contract tests (exit codes, the one-line refusal on stderr). The timeout turns "it
 * started anyway" into a failure, not a hang.
 */
export function runEntryPoint(
  file: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [file],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
      (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stderr }),
    );
  });
}
