import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point, run as its own process the way `pnpm pda` runs it. */
export const PDA_MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface PdaResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `pda <args…>` with only PATH, PDA_DATA_DIR (when given) and `env`; never rejects. */
export function runPda(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<PdaResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PDA_MAIN, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}
