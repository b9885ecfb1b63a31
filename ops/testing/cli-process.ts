// Runs an ops CLI as a real process (node, as `pnpm --filter @pda/ops seed|keys` does) and
// returns its exit code and output. The PDA_PG_* variables of this process are passed on, unless
// `env` replaces the environment.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const opsDir = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runOpsCli(
  script: 'seed' | 'keys' | 'balancer',
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(opsDir, script, 'cli.ts'), ...args],
      { cwd: opsDir, env },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
