/**
 * Argument parsing shared by the replay and rebuild commands. pnpm runs package scripts inside
 * ingest/, so relative paths are resolved against INIT_CWD (where the user typed the command).
 */
import { resolve } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';

export function parseCli<T extends NonNullable<ParseArgsConfig['options']>>(options: T, usage: string) {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nusage: ${usage}\n`);
    process.exit(2);
  }
}

export function userPath(path: string): string {
  return resolve(process.env.INIT_CWD ?? process.cwd(), path);
}

export function die(message: string, usage: string): never {
  process.stderr.write(`${message}\nusage: ${usage}\n`);
  process.exit(2);
}
