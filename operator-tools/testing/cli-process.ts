// Runs a CLI of the operator tools or of the dev world as a real process (node, as
// `pnpm --filter @pda/operator-tools keys` or `pnpm --filter @pda/dev-world seed` does) and returns
// its exit code and output. The PDA_PG_* variables of this process are passed on, unless `env`
// replaces the environment.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each CLI's package folder (its working directory, as under pnpm) and entry file. */
const CLIS = {
  seed: ['dev-world', 'seed/cli.ts'],
  keys: ['operator-tools', 'keys/cli.ts'],
  balancer: ['operator-tools', 'balancer/cli.ts'],
} as const;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runOpsCli(
  script: keyof typeof CLIS,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliResult> {
  const [packageDir, entry] = CLIS[script];
  const cwd = join(repoRoot, packageDir);
  return new Promise((resolve) => {
    execFile(process.execPath, [join(cwd, entry), ...args], { cwd, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
