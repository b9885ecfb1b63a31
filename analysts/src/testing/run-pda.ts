import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point, run as its own process the way `pnpm pda` runs it. */
export const PDA_MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface PdaResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `pda <args…>` with only PATH and `env` (in `cwd` when given); never rejects. */
export function runPda(
  args: readonly string[],
  env: Record<string, string> = {},
  options: { readonly cwd?: string; readonly timeoutMs?: number } = {},
): Promise<PdaResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PDA_MAIN, ...args],
      {
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}
