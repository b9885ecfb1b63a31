// Traces from the source commit to the partner, in a real OTLP receiver (Jaeger, @pda/dev-world/jaeger):
// ingest and the api run as their deployables with the standard OTEL_* settings pointing at it; a
// site update committed in PostgreSQL goes through Debezium and Kafka into ingest's batch span, and
// the api's span of the change-feed page that first served it links to that batch. No key, cursor
// or token in any span that reached the receiver.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Jaeger, type JaegerSpan, startJaeger, tagOf } from '@pda/dev-world/jaeger';
import { SCOPE_NAMES } from '@pda/operator-tools/scopes';
import { freePort } from '@pda/projections/testing';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRows, largeNotes, newScenarioIds, type ScenarioIds } from './src/cdc-scenario.ts';
import { issueKey } from './src/read-side.ts';
import { pgPool, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

const children: ChildProcess[] = [];
const dirs: string[] = [];
let pool: pg.Pool;
let jaeger: Jaeger;
let ids: ScenarioIds;
let key: string;
let apiUrl: string;

function start(name: string, script: string, env: NodeJS.ProcessEnv) {
  const child = spawn(
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', join(repoRoot, script)],
    {
      env: { ...process.env, ...env },
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('exit', (code, signal) => {
    if (code !== null && code !== 0) console.error(`${name} exited ${code ?? signal}:\n${output}`);
  });
  children.push(child);
}

const api = (path: string) => fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });

beforeAll(async () => {
  jaeger = await startJaeger();
  pool = pgPool();
  ids = newScenarioIds();
  await insertRows(pool, ids, largeNotes());
  key = await issueKey(pool, ids.company, [...SCOPE_NAMES], 'tracing e2e');

  const dataDir = mkdtempSync(join(tmpdir(), 'pda-tracing-data-'));
  dirs.push(dataDir);
  const [ingestAdmin, apiPort, apiAdmin] = [await freePort(), await freePort(), await freePort()];
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '200' };
  const env = stackEnv();
  start('ingest', 'ingest/src/main.ts', {
    ...otel,
    INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
    INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
    INGEST_TOPIC_PREFIX: env.topicPrefix,
    INGEST_GROUP_ID: `tracing-${Date.now()}`,
    INGEST_DATA_DIR: dataDir,
    INGEST_ADMIN_PORT: String(ingestAdmin),
    INGEST_LOG_LEVEL: 'warn',
  });
  await waitFor(
    'ingest caught up (/readyz)',
    async () =>
      (await fetch(`http://127.0.0.1:${ingestAdmin}/readyz`).catch(() => undefined))?.status === 200,
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  start('api', 'api/src/main.ts', {
    ...otel,
    API_DATA_DIR: dataDir,
    API_PORT: String(apiPort),
    API_ADMIN_PORT: String(apiAdmin),
    API_CURSOR_SECRET: 'tracing-e2e-cursor-secret-0123456789abcdef',
    API_LOG_LEVEL: 'warn',
  });
  apiUrl = `http://127.0.0.1:${apiPort}`;
  await waitFor('the key works', async () => (await api('/v1/sites?limit=1').catch(() => undefined))?.ok, {
    timeoutMs: 60_000,
    intervalMs: 300,
  });
}, 300_000);

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await pool?.end();
  await jaeger?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('traces in a real OTLP receiver', () => {
  let batchSpan: JaegerSpan;
  let cursor: string;

  it('a committed change is in one ingest batch span with a child per stage, carrying its position', async () => {
    // Read the feed up to now, so that the next page is the one that first serves the marker.
    const caughtUp = (await (await api('/v1/changes?filter[type]=sites&limit=200')).json()) as {
      links: { next: string };
    };
    cursor = new URL(caughtUp.links.next).searchParams.get('cursor') ?? '';
    const marker = `traced ${Date.now()}`;
    const before = Date.now();
    const committed = await pool.query('UPDATE sites SET name = $2 WHERE id = $1', [ids.site, marker]);
    expect(committed.rowCount).toBe(1);
    const after = Date.now();
    // The marker's change: this company's site, committed between `before` and `after` (1 s of
    // slack for the clocks of PostgreSQL and this process; the catch-up's batches hold older ones).
    const markerIndex = (span: JaegerSpan) => {
      const companies = JSON.parse(String(tagOf(span, 'pda.change.company') ?? '[]')) as string[];
      const tables = JSON.parse(String(tagOf(span, 'pda.change.table') ?? '[]')) as string[];
      const commits = JSON.parse(String(tagOf(span, 'pda.change.source_commit_ms') ?? '[]')) as number[];
      return companies.findIndex(
        (c, i) =>
          c === ids.company &&
          tables[i] === 'sites' &&
          (commits[i] ?? 0) >= before - 1000 &&
          (commits[i] ?? 0) <= after + 1000,
      );
    };

    batchSpan = await waitFor(
      'the batch span of the marker in Jaeger',
      async () => {
        for (const trace of await jaeger.traces('pda-ingest')) {
          for (const span of trace.spans) {
            if (span.operationName === 'ingest.batch' && markerIndex(span) >= 0) return span;
          }
        }
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const trace = (await jaeger.traces('pda-ingest')).find((t) => t.traceID === batchSpan.traceID);
    const stages = (trace?.spans ?? [])
      .filter((s) => s.references.some((r) => r.refType === 'CHILD_OF' && r.spanID === batchSpan.spanID))
      .map((s) => s.operationName)
      .sort();
    expect(stages).toEqual(
      [
        'ingest.apply',
        'ingest.decode',
        'ingest.durable_flush',
        'ingest.fetch',
        'ingest.offset_commit',
        'ingest.plan',
      ].sort(),
    );
    const i = markerIndex(batchSpan);
    const lsns = JSON.parse(String(tagOf(batchSpan, 'pda.change.lsn'))) as number[];
    const kafka = JSON.parse(String(tagOf(batchSpan, 'pda.change.kafka'))) as string[];
    expect(lsns[i]).toBeGreaterThan(0);
    expect(kafka[i]).toMatch(new RegExp(`^${stackEnv().topicPrefix}\\.public\\.sites/\\d+/\\d+$`));
  });

  it("the api's span of the feed page that first served it links to that batch", async () => {
    const served = await waitFor(
      'the marker on the feed',
      async () => {
        const page = (await (
          await api(`/v1/changes?filter[type]=sites&limit=200&cursor=${cursor}`)
        ).json()) as {
          data: { id: string }[];
        };
        return page.data.some((item) => item.id === ids.site) ? page : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(served.data.length).toBeGreaterThan(0);
    const linked = await waitFor(
      "an api span linking to the batch's trace",
      async () => {
        for (const trace of await jaeger.traces('pda-api', { 'pda.company': ids.company })) {
          for (const span of trace.spans) {
            if (span.references.some((r) => r.traceID === batchSpan.traceID && r.spanID === batchSpan.spanID))
              return span;
          }
        }
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(linked.operationName).toBe('GET /v1/changes');
    expect(tagOf(linked, 'http.route')).toBe('/v1/changes');
    expect(tagOf(linked, 'url.path')).toBe('/v1/changes');
  });

  it('no key, cursor or token in any span the receiver holds', async () => {
    const everything = JSON.stringify([
      ...(await jaeger.traces('pda-api')),
      ...(await jaeger.traces('pda-ingest')),
    ]);
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain('svc_pk_');
    expect(everything).not.toContain(cursor);
    expect(everything).not.toContain('cursor=');
  });
});
