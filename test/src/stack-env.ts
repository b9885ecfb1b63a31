// Helpers for tests and scripts that talk to the native stack started by dev-world/stack/stack.sh:
// pg / kafkajs clients from its addresses (read by readStackEnv of @pda/dev-world/stack), polling for a condition.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStackEnv, stackEnvFile } from '@pda/dev-world/stack';
import { registerKafkajsCodecs } from '@pda/ingest';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';

export { loadStackEnv, stackDir } from '@pda/dev-world/stack';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface StackEnv {
  pg: { host: string; port: number; database: string; user: string; password: string };
  kafkaBrokers: string[];
  connectUrl: string;
  /** The registry's Confluent-compatible API: what ingest needs to read the Avro topics. */
  schemaRegistryUrl: string;
  topicPrefix: string;
  connectorName: string;
}

function required(name: string): string {
  // A worker that did not inherit the globalSetup's environment still finds the running stack.
  if (!process.env[name]) loadStackEnv();
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run 'bash dev-world/stack/stack.sh up' and source ${stackEnvFile()}`,
    );
  }
  return value;
}

export function stackEnv(): StackEnv {
  return {
    pg: {
      host: required('PDA_PG_HOST'),
      port: Number(required('PDA_PG_PORT')),
      database: required('PDA_PG_DATABASE'),
      user: required('PDA_PG_USER'),
      password: required('PDA_PG_PASSWORD'),
    },
    kafkaBrokers: required('PDA_KAFKA_BROKERS').split(','),
    connectUrl: required('PDA_CONNECT_URL'),
    schemaRegistryUrl: required('PDA_SCHEMA_REGISTRY_URL'),
    topicPrefix: required('PDA_TOPIC_PREFIX'),
    connectorName: process.env.PDA_CONNECTOR_NAME ?? 'pda-postgres',
  };
}

/**
 * A client of the stack's database as Debezium's login role (REPLICATION, SELECT on the captured
 * tables): PDA_DEBEZIUM_USER / PDA_DEBEZIUM_PASSWORD, else the native stack's demo role.
 */
export function debeziumClient(env = stackEnv()): pg.Client {
  return new pg.Client({
    ...env.pg,
    user: process.env.PDA_DEBEZIUM_USER ?? 'debezium',
    password: process.env.PDA_DEBEZIUM_PASSWORD ?? 'debezium',
  });
}

export function pgPool(env = stackEnv(), max = 4): pg.Pool {
  return new pg.Pool({ ...env.pg, max });
}

/** Runs the statements in one transaction (rolled back if any fails). */
export async function inTransaction(pool: pg.Pool, statements: Array<[string, unknown[]]>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const [sql, params] of statements) await client.query(sql, params);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

export function kafkaClient(clientId: string, env = stackEnv()): Kafka {
  // The connector compresses with zstd (dev-world/stack/connector.json), which kafkajs alone cannot read.
  registerKafkajsCodecs();
  return new Kafka({ clientId, brokers: env.kafkaBrokers, logLevel: logLevel.WARN });
}

/** Polls `probe` until it returns something other than undefined/false; throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 200 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A Kafka Connect REST call; throws with the worker's message on a non-2xx answer. */
export async function connectRequest(
  path: string,
  init: RequestInit = {},
  env = stackEnv(),
): Promise<unknown> {
  const response = await fetch(`${env.connectUrl}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', ...init.headers },
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(
      `Kafka Connect ${init.method ?? 'GET'} ${path} → ${response.status}: ${text.slice(0, 500)}`,
    );
  }
  return text ? JSON.parse(text) : null;
}
