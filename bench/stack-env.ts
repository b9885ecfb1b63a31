/** The running native stack's addresses (`.stack/env`, written by ops/stack/stack.sh up). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '..');

/** PDA_* variables of .stack/env; empty when the stack was never started here. */
export function readStackEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  try {
    for (const match of readFileSync(join(repoRoot, '.stack', 'env'), 'utf8').matchAll(
      /export (PDA_\w+)=(\S+)/g,
    )) {
      env[match[1] as string] = (match[2] as string).replace(/^['"]|['"]$/g, '');
    }
  } catch {
    // no stack
  }
  return env;
}

/** Kafka brokers from PDA_KAFKA_BROKERS (environment first, then .stack/env). */
export function kafkaBrokers(): string[] {
  const brokers = process.env.PDA_KAFKA_BROKERS ?? readStackEnv().PDA_KAFKA_BROKERS;
  if (!brokers) throw new Error('no PDA_KAFKA_BROKERS: start the stack (bash ops/stack/stack.sh up)');
  return brokers.split(',');
}
