/** The running native stack's addresses, read by @pda/ops/stack (<stack dir>/env, written by ops/stack/stack.sh up). */
import { join } from 'node:path';
import { readStackEnv } from '@pda/ops/stack';

export { readStackEnv, stackEnvFile } from '@pda/ops/stack';

export const repoRoot = join(import.meta.dirname, '..');

/** Kafka brokers from PDA_KAFKA_BROKERS (environment first, then the stack's env file). */
export function kafkaBrokers(): string[] {
  const brokers = process.env.PDA_KAFKA_BROKERS ?? readStackEnv().PDA_KAFKA_BROKERS;
  if (!brokers) throw new Error('no PDA_KAFKA_BROKERS: start the stack (bash ops/stack/stack.sh up)');
  return brokers.split(',');
}
