// Freshness while the source is idle: Debezium's heartbeats (heartbeat.interval.ms in
// dev-world/stack/connector.json) reach ingest, which records in control.sqlite how far the projection is
// known current once it has applied everything before them. With no row changing, the staleness the
// api reports (/v1/health) and ingest's source lag (metrics, /readyz) stay within a heartbeat or two
// instead of growing with the time since the last change; and they do grow once the connector
// stops sending (paused), which is what the PdaIngestStale alert relies on.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, parseConfig as parseApiConfig } from '@pda/api';
import { createLogger, createWorker, loadAvscTypes, parseConfig, type Worker } from '@pda/ingest';
import { openControlReader, ReadHandle, readIngestState } from '@pda/projections/read';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRequest, stackEnv, waitFor } from './src/stack-env.ts';

const HEARTBEAT_INTERVAL_S = 1; // dev-world/stack/connector.json
// "Within a few heartbeats": 5 s, so that a loaded test machine (a slow Connect JVM) stays inside
// it while the source lag of a paused connector passes it within seconds.
const BOUND_S = 5;

let dataDir: string;
let worker: Worker;
let running: Promise<void>;

function ingestState() {
  const handle = new ReadHandle(openControlReader(dataDir));
  try {
    return readIngestState(handle);
  } finally {
    handle.close();
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-heartbeat-'));
  const env = stackEnv();
  worker = createWorker(
    parseConfig({
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
      INGEST_TOPIC_PREFIX: env.topicPrefix,
      INGEST_GROUP_ID: `e2e-heartbeat-${randomUUID()}`,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_PORT: '0',
      INGEST_LOG_LEVEL: 'warn',
    }),
    { logger: createLogger('warn'), avscTypes: await loadAvscTypes() },
  );
  running = worker.run();
  await waitFor(
    'ingest caught up',
    async () => (await fetch(`http://127.0.0.1:${worker.adminPort()}/readyz`)).status === 200,
    { timeoutMs: 150_000, intervalMs: 500 },
  );
}, 200_000);

afterAll(async () => {
  worker?.stop();
  await running;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('heartbeats while nothing changes', () => {
  it('records a heartbeat newer than the wait began, with no row changing', async () => {
    const began = Date.now();
    const state = await waitFor(
      'a heartbeat recorded in control.sqlite',
      () => {
        const s = ingestState();
        return (s.sourceCurrentAtMs ?? 0) >= began ? s : undefined;
      },
      { timeoutMs: (HEARTBEAT_INTERVAL_S * 3 + 10) * 1000, intervalMs: 200 },
    );
    // The heartbeat is what moved it, not a change: the last applied change is older.
    expect(state.sourceCurrentAtMs).toBeGreaterThan(state.lastSourceTsMs ?? 0);
  });

  it('keeps the api staleness, the source lag metric and /readyz within a few heartbeats', async () => {
    // Long enough idle that "time since the last change" would exceed the bound below.
    await new Promise((resolve) => setTimeout(resolve, BOUND_S * 1000 + 1000));
    const bound = BOUND_S;

    // Health gives no figure (only the dependency answers): judged against the bound, it says ok.
    const app = await buildApp(
      parseApiConfig({
        API_DATA_DIR: dataDir,
        API_CURSOR_SECRET: randomBytes(32).toString('hex'),
        API_HEALTH_MAX_STALENESS_S: String(bound),
      }),
      { logger: false },
    );
    try {
      const health = await app.inject({ url: '/v1/health' });
      expect(health.json()).toEqual({ status: 'ok', checks: { projections: 'ok' } });
      expect(health.statusCode).toBe(200);
    } finally {
      await app.close();
    }

    const admin = `http://127.0.0.1:${worker.adminPort()}`;
    const metrics = await (await fetch(`${admin}/metrics`)).text();
    const lag = Number(/^pda_ingest_source_lag_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(bound);
    const ready = (await (await fetch(`${admin}/readyz`)).json()) as { source_lag_seconds: number | null };
    expect(ready.source_lag_seconds).toBeLessThan(bound);
  }, 60_000);

  it('lets the source lag grow while the connector sends nothing, and recover when it resumes', async () => {
    const { connectorName } = stackEnv();
    const admin = `http://127.0.0.1:${worker.adminPort()}`;
    const sourceLag = async () =>
      ((await (await fetch(`${admin}/readyz`)).json()) as { source_lag_seconds: number | null })
        .source_lag_seconds ?? 0;
    await connectRequest(`/connectors/${connectorName}/pause`, { method: 'PUT' });
    try {
      // No heartbeat for a while: the lag passes what heartbeats would have kept it under.
      const grown = await waitFor(
        'the source lag to grow',
        async () => {
          const lag = await sourceLag();
          return lag > BOUND_S ? lag : undefined;
        },
        { timeoutMs: BOUND_S * 4 * 1000, intervalMs: 1000 },
      );
      expect(grown).toBeGreaterThan(BOUND_S);
    } finally {
      await connectRequest(`/connectors/${connectorName}/resume`, { method: 'PUT' });
    }
    const recovered = await waitFor(
      'the source lag to recover',
      async () => {
        const lag = await sourceLag();
        return lag < BOUND_S ? lag : undefined;
      },
      { timeoutMs: BOUND_S * 6 * 1000, intervalMs: 1000 },
    );
    expect(recovered).toBeLessThan(BOUND_S);
  }, 180_000);
});
