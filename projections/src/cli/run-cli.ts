// The one shell of the workspace's command-line tools (the dev world's seed and keys, ingest's replay and
// rebuild): bad arguments → one `error:` line and the usage, exit 2; a missing or refused setting
// (no database to connect to) → one `error:` line, exit 2; any other failure (database
// unreachable, key not found, rebuild refused) → one `error:` line, exit 1. No stack traces.
// Exported as `@pda/projections/cli` so a tool loads it without better-sqlite3; it lives here, the
// package every tool can depend on (ingest → projections ← api; ops may depend on anything).
import { resolve } from 'node:path';

/** Thrown for anything the caller typed wrong. */
export class UsageError extends Error {}

/** Thrown for a setting that is missing or refused (exit 2 like a usage error; the usage would not help). */
export class SettingsError extends Error {}

/** `pnpm --filter <pkg> <script> -- --x` may or may not forward the `--`; accept both. */
export function cliArgs(argv: readonly string[] = process.argv.slice(2)): string[] {
  return argv[0] === '--' ? argv.slice(1) : [...argv];
}

/** pnpm runs package scripts inside the package: resolve a path the user typed against INIT_CWD. */
export function userPath(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

function isParseArgsError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describeError(error.errors[0]);
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ECONNREFUSED') return `cannot reach PostgreSQL (${error.message})`;
    return error.message.split('\n')[0] ?? String(error);
  }
  return String(error);
}

/** Runs `main`, turning a failure into one line on stderr and the exit code (it does not exit). */
export async function runCli(usage: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      process.stderr.write(`error: ${describeError(error)}\n\n${usage}\n`);
      process.exitCode = 2;
    } else if (error instanceof SettingsError) {
      process.stderr.write(`error: ${describeError(error)}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`error: ${describeError(error)}\n`);
      process.exitCode = 1;
    }
  }
}

/** A whole number >= 0 from an option value, or a UsageError naming the option. */
export function wholeNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value)) {
    throw new UsageError(`--${name} must be a whole number >= 0, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
