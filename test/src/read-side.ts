// The read side of the pipeline for an end-to-end test: ingest (a worker of a consumer group of
// its own, into a temp data dir, reading the stack's topics from the beginning) and the api on the
// same files, in-process. `app.inject` for tests that speak to the app directly; with `listen`, the
// api also serves HTTP on a loopback port (for a client: its links point at that address).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, parseConfig as parseApiConfig } from '@pda/api';
import { createLogger, createWorker, loadAvscTypes, parseConfig, type Worker } from '@pda/ingest';
import { issueApiKey } from '@pda/operator-tools/keys';
import { freePort } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { stackEnv } from './stack-env.ts';

export interface ReadSideOptions {
  /** Names the consumer group and the data dir (`e2e-<name>-…`). */
  readonly name: string;
  /** API_* settings on top of the defaults below (e.g. API_UPDATED_SINCE_OVERLAP_MS). */
  readonly api?: Record<string, string>;
  /** Serve HTTP on a free loopback port (baseUrl). */
  readonly listen?: boolean;
}

export interface ReadSide {
  readonly dataDir: string;
  readonly app: FastifyInstance;
  /** `http://127.0.0.1:<port>` with `listen`; otherwise `http://<name>.test` (links only). */
  readonly baseUrl: string;
  /** Stops ingest and starts it again with INGEST_* settings added (same group, same files). */
  restartIngest(extra?: Record<string, string>): Promise<void>;
  /** Rebuilds one company's file from the topics in the running ingest (a new generation of it). */
  rebuildCompany(companyId: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReadSide(options: ReadSideOptions): Promise<ReadSide> {
  const dataDir = mkdtempSync(join(tmpdir(), `${options.name}-e2e-`));
  const groupId = `e2e-${options.name}-${randomUUID()}`;
  const avscTypes = await loadAvscTypes();
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  const startIngest = (extra: Record<string, string> = {}) => {
    const env = stackEnv();
    const config = parseConfig({
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
      INGEST_TOPIC_PREFIX: env.topicPrefix,
      INGEST_GROUP_ID: groupId,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_PORT: '0',
      INGEST_LOG_LEVEL: 'warn',
      ...extra,
    });
    worker = createWorker(config, { logger: createLogger('warn'), avscTypes });
    running = worker.run();
  };
  const stopIngest = async () => {
    worker?.stop();
    await running;
    worker = undefined;
    running = undefined;
  };

  startIngest();
  const port = options.listen ? await freePort() : undefined;
  const baseUrl = port === undefined ? `http://${options.name}.test` : `http://127.0.0.1:${port}`;
  const app = await buildApp(
    parseApiConfig({
      API_DATA_DIR: dataDir,
      API_CURSOR_SECRET: randomBytes(32).toString('hex'),
      API_PUBLIC_BASE_URL: baseUrl,
      API_RATE_LIMIT_MAX: '1000000',
      API_REOPEN_CHECK_MS: '0',
      ...options.api,
    }),
    { logger: false },
  );
  if (port !== undefined) await app.listen({ host: '127.0.0.1', port });
  return {
    dataDir,
    app,
    baseUrl,
    restartIngest: async (extra) => {
      await stopIngest();
      startIngest(extra);
    },
    rebuildCompany: async (companyId) => {
      if (worker === undefined) throw new Error('ingest is not running');
      await worker.rebuildCompany(companyId);
    },
    close: async () => {
      await app.close();
      await stopIngest();
    },
  };
}

/** A new API key of one company with `scopes` (issued in PostgreSQL, as the office does). */
export async function issueKey(
  pool: pg.Pool,
  companyId: string,
  scopes: string[],
  name: string,
): Promise<string> {
  const client = await pool.connect();
  try {
    return (await issueApiKey(client, { companyIds: [companyId], name, scopes })).key;
  } finally {
    client.release();
  }
}
