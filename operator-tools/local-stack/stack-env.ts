// The one reader of the native stack's addresses, for tests, benchmarks and tools: `dev-world/stack/stack.sh
// up` writes them to <stack dir>/env as `export NAME=value` lines, the stack dir being PDA_STACK_DIR
// or <repo>/.stack (dev-world/stack/README.md). Shell scripts read the same file through
// scripts/lib/stack-env.sh.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const repoRoot = join(import.meta.dirname, '..', '..');

/** The stack dir that `stack.sh` run with this environment uses. */
export function stackDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PDA_STACK_DIR || join(repoRoot, '.stack');
}

export function stackEnvFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(stackDir(env), 'env');
}

/** The variables of the stack's env file; empty when no stack was ever started in that dir. */
export function readStackEnv(file = stackEnvFile()): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return {};
    throw error;
  }
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) env[match[1]] = unquoteBash(match[2]);
  }
  return env;
}

// stack.sh quotes values with bash's printf %q: backslash escapes only for the values it writes.
function unquoteBash(value: string): string {
  if (value.startsWith("$'") || value.startsWith("'")) {
    throw new Error(`unsupported quoting in the stack's env file: ${value}`);
  }
  return value.replace(/\\(.)/g, '$1');
}

/** Copies the stack's addresses into process.env (the file wins: it describes the running stack). */
export function loadStackEnv(file = stackEnvFile()): Record<string, string> {
  const env = readStackEnv(file);
  Object.assign(process.env, env);
  return env;
}
