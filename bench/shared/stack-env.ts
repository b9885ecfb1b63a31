/** The running native stack's addresses, read by @pda/dev-world/stack (<stack dir>/env, written by dev-world/stack/stack.sh up). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readStackEnv } from '@pda/dev-world/stack';
import pg from 'pg';
import { repoRoot } from './paths.ts';

export { readStackEnv, stackEnvFile } from '@pda/dev-world/stack';

/** Kafka brokers from PDA_KAFKA_BROKERS (environment first, then the stack's env file). */
export function kafkaBrokers(): string[] {
  const brokers = process.env.PDA_KAFKA_BROKERS ?? readStackEnv().PDA_KAFKA_BROKERS;
  if (!brokers) throw new Error('no PDA_KAFKA_BROKERS: start the stack (bash dev-world/stack/stack.sh up)');
  return brokers.split(',');
}

/** A client of the stack's PostgreSQL as its application user; `database` defaults to the stack's. */
export function stackPgClient(database?: string): pg.Client {
  const env = readStackEnv();
  return new pg.Client({
    host: env.PDA_PG_HOST,
    port: Number(env.PDA_PG_PORT),
    database: database ?? env.PDA_PG_DATABASE,
    user: env.PDA_PG_USER,
    password: env.PDA_PG_PASSWORD,
  });
}

/** A pool of the stack's PostgreSQL as its application user, at most `max` connections. */
export function stackPgPool(max: number): pg.Pool {
  const env = readStackEnv();
  return new pg.Pool({
    host: env.PDA_PG_HOST,
    port: Number(env.PDA_PG_PORT),
    database: env.PDA_PG_DATABASE,
    user: env.PDA_PG_USER,
    password: env.PDA_PG_PASSWORD,
    max,
  });
}

/** Kafka Connect's REST api (PDA_CONNECT_URL): the parsed JSON answer; throws on a non-2xx. */
export async function connectRest(path: string, init?: RequestInit): Promise<unknown> {
  const url = process.env.PDA_CONNECT_URL ?? readStackEnv().PDA_CONNECT_URL;
  if (!url) throw new Error('no PDA_CONNECT_URL: start the stack (bash dev-world/stack/stack.sh up)');
  const response = await fetch(`${url}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (!response.ok)
    throw new Error(`Kafka Connect ${init?.method ?? 'GET'} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A connector's key and value converter settings for `format` (dev-world/stack/converters/<format>.json). */
export function converterSettings(format: 'avro' | 'json'): Record<string, string> {
  return JSON.parse(readFileSync(join(repoRoot, 'dev-world/stack/converters', `${format}.json`), 'utf8'));
}
