// The Avro path on the real stack: a private Debezium connector writes Avro through Apicurio's
// converter and the stack's schema registry (dev-world/stack/converters/avro.json); ingest reads the writer
// schemas from the registry by id. Rows arrive equal to PostgreSQL; a column added at the source is
// a new schema version ingest decodes without a restart; a writer schema that no longer fits its
// table dead-letters with the reason; while the registry is down a new worker waits (not ready,
// nothing dead-lettered) and catches up once it is back.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createLogger,
  createMetrics,
  createWorker,
  loadAvscTypes,
  parseConfig,
  type Worker,
} from '@pda/ingest';
import { avroEventEncoder } from '@pda/ingest/testing';
import { openControlReader } from '@pda/projections/read';
import type { Kafka } from 'kafkajs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { converterConfig, schemaRegistryUrl } from './src/avro-records.ts';
import { edgeValueSites } from './src/edge-sites.ts';
import { type PrivateConnector, startPrivateConnector } from './src/private-connector.ts';
import { expectProjectionSettlesOnPostgres } from './src/projection-vs-postgres.ts';
import {
  inTransaction,
  kafkaClient,
  pgPool,
  repoRoot,
  stackDir,
  stackEnv,
  waitFor,
} from './src/stack-env.ts';

let pool: pg.Pool;
let kafka: Kafka;
let connector: PrivateConnector;

async function registry(path: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(`${schemaRegistryUrl()}${path}`, {
    ...init,
    headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`registry ${path}: ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function startWorker(dataDir: string) {
  const metrics = createMetrics();
  return loadAvscTypes().then((avscTypes) => {
    const worker = createWorker(
      parseConfig({
        INGEST_KAFKA_BROKERS: stackEnv().kafkaBrokers.join(','),
        INGEST_TOPIC_PREFIX: connector.topicPrefix,
        INGEST_GROUP_ID: `e2e-avro-${randomUUID()}`,
        INGEST_DATA_DIR: dataDir,
        INGEST_ADMIN_PORT: '0',
        INGEST_LOG_LEVEL: 'warn',
        INGEST_SCHEMA_REGISTRY_URL: schemaRegistryUrl(),
      }),
      { logger: createLogger('warn'), avscTypes, metrics },
    );
    return { worker, metrics, running: worker.run() };
  });
}

async function createCompany(sites: number): Promise<string> {
  const company = randomUUID();
  await inTransaction(pool, [
    ["INSERT INTO companies (id, name, currency) VALUES ($1, 'Avro e2e Snow & Ice', 'CAD')", [company]],
    edgeValueSites(company, sites),
    [
      `INSERT INTO services (company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
                             subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
       SELECT $1, 'Plowing ' || g, 'hourly', 9999999999.99 - g, 'CAD', 'per_push', -0.01 * g, 'CAD'
       FROM generate_series(1, 20) AS g`,
      [company],
    ],
  ]);
  return company;
}

const settlesOnPostgres = (dataDir: string, company: string) =>
  expectProjectionSettlesOnPostgres(pool, dataDir, company, { timeoutMs: 120_000, intervalMs: 500 });

function deadLetters(dataDir: string): { topic: string; reason: string }[] {
  const control = openControlReader(dataDir);
  try {
    return control.prepare('SELECT topic, reason FROM dead_letters').all() as {
      topic: string;
      reason: string;
    }[];
  } finally {
    control.close();
  }
}

beforeAll(async () => {
  pool = pgPool();
  kafka = kafkaClient('e2e-avro');
  // Streaming only: the stack's database may hold millions of benchmark rows.
  connector = await startPrivateConnector('avro', { ...converterConfig('avro'), 'snapshot.mode': 'no_data' });
});

afterAll(async () => {
  await pool.query('ALTER TABLE sites DROP COLUMN IF EXISTS e2e_gate_code').catch(() => {});
  await connector?.remove(kafka);
  await pool?.end();
});

describe('ingest of Avro change events through the schema registry', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-avro-e2e-'));
  let worker: Worker;
  let running: Promise<void>;
  let company: string;

  beforeAll(async () => {
    ({ worker, running } = await startWorker(dataDir));
  });
  afterAll(async () => {
    worker?.stop();
    await running;
  });

  it('rows arrive equal to PostgreSQL (exact decimals, UTC timestamps, TOAST placeholder)', async () => {
    company = await createCompany(60);
    expect(await settlesOnPostgres(dataDir, company)).toBeGreaterThan(60);
    // Unchanged TOASTed notes: the update's placeholder keeps the stored value.
    await pool.query("UPDATE sites SET city = 'Montréal' WHERE company_id = $1", [company]);
    await settlesOnPostgres(dataDir, company);
    const subjects = (await registry('/subjects')) as string[];
    expect(subjects).toContain(`${connector.topicPrefix}.public.sites-value`);
    expect(subjects).toContain(`${connector.topicPrefix}.public.sites-key`);
    expect(deadLetters(dataDir)).toEqual([]);
  });

  it('a column added at the source is a new schema version, decoded without a restart', async () => {
    const subject = `${connector.topicPrefix}.public.sites-value`;
    const before = ((await registry(`/subjects/${subject}/versions`)) as number[]).length;
    await pool.query('ALTER TABLE sites ADD COLUMN e2e_gate_code text');
    try {
      await pool.query(
        "UPDATE sites SET name = name || ' (gated)', e2e_gate_code = '4711' WHERE company_id = $1",
        [company],
      );
      await settlesOnPostgres(dataDir, company);
      const versions = (await registry(`/subjects/${subject}/versions`)) as number[];
      expect(versions.length).toBe(before + 1);
      const latest = (await registry(`/subjects/${subject}/versions/latest`)) as { schema: string };
      expect(latest.schema).toContain('e2e_gate_code');
    } finally {
      await pool.query('ALTER TABLE sites DROP COLUMN e2e_gate_code');
    }
    // Dropping it is a compatible version too (BACKWARD_TRANSITIVE: the field was optional).
    await pool.query("UPDATE sites SET name = replace(name, ' (gated)', '') WHERE company_id = $1", [
      company,
    ]);
    await settlesOnPostgres(dataDir, company);
    expect(deadLetters(dataDir)).toEqual([]);
  });

  it('a writer schema that no longer fits the table dead-letters with its reason', async () => {
    const topic = `${connector.topicPrefix}.public.sites`;
    const latest = async (suffix: string) => {
      const v = (await registry(`/subjects/${topic}-${suffix}/versions/latest`)) as {
        id: number;
        schema: string;
      };
      return { id: v.id, json: JSON.parse(v.schema) };
    };
    const key = await latest('key');
    const value = await latest('value');
    // `area` as text: Avro-wise a different field type, so registered under a subject of its own
    // (the global BACKWARD_TRANSITIVE rule would refuse it for the topic's subject).
    const row = value.json.fields.find((f: { name: string }) => f.name === 'before').type[1];
    row.fields = row.fields.map((f: { name: string }) =>
      f.name === 'area' ? { name: 'area', type: ['null', 'string'], default: null } : f,
    );
    const { id } = (await registry(`/subjects/${connector.topicPrefix}-e2e-incompatible/versions`, {
      method: 'POST',
      body: JSON.stringify({ schema: JSON.stringify(value.json) }),
    })) as { id: number };
    const encode = avroEventEncoder(
      () => ({ keyId: key.id, key: key.json, valueId: id, value: value.json }),
      {
        topicPrefix: connector.topicPrefix,
      },
    );
    const siteId = randomUUID();
    const event = encode({
      table: 'sites',
      op: 'c',
      row: {
        id: siteId,
        company_id: company,
        name: 'Mislabelled',
        area: '12.5 m2',
        created_at: '2026-01-01T00:00:00Z',
      },
      lsn: 1,
      tsMs: Date.now(),
    });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: event.key, value: event.value }] });
    await producer.disconnect();
    const letters = await waitFor('the dead letter', () => {
      const found = deadLetters(dataDir);
      return found.length > 0 ? found : undefined;
    });
    expect(letters).toEqual([
      {
        topic,
        reason: `writer schema ${id} of ${topic} does not fit schemas/sites.avsc: column 'area' is string, expected decimal(scale 2)`,
      },
    ]);
  });

  it('while the registry is down a new worker waits, not ready, nothing dead-lettered; then catches up', async () => {
    const pidFile = join(stackDir(), 'run', 'registry.pid');
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    await waitFor('the registry to stop', () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    const otherDir = mkdtempSync(join(tmpdir(), 'ingest-avro-e2e-outage-'));
    const second = await startWorker(otherDir);
    try {
      const admin = () => `http://127.0.0.1:${second.worker.adminPort()}`;
      const readyz = await waitFor('/readyz to say the registry is awaited', async () => {
        if (!second.worker.adminPort()) return undefined;
        const response = await fetch(`${admin()}/readyz`);
        const body = (await response.json()) as { schema_registry?: { status: string; error?: string } };
        return body.schema_registry?.status === 'waiting' ? { status: response.status, body } : undefined;
      });
      expect(readyz.status).toBe(503);
      expect(readyz.body.schema_registry?.error).toMatch(/unreachable/);
      expect(await (await fetch(`${admin()}/healthz`)).text()).toContain('ok');
      const metrics = await (await fetch(`${admin()}/metrics`)).text();
      expect(metrics).toMatch(/^pda_ingest_schema_registry_waiting 1$/m);
      expect(metrics).not.toMatch(/outcome="dead_lettered"\} [1-9]/);

      await promisify(execFile)('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), 'up'], {
        env: process.env,
      });
      expect(await settlesOnPostgres(otherDir, company)).toBeGreaterThan(60);
      expect(second.worker.source()?.connected()).toBe(true);
      // The only dead letter is the mislabelled event of the test above; no good event became one.
      expect(deadLetters(otherDir).map((d) => d.reason)).toEqual([
        expect.stringContaining("column 'area' is string"),
      ]);
      const after = await (await fetch(`${admin()}/metrics`)).text();
      expect(after).toMatch(/^pda_ingest_schema_registry_waiting 0$/m);
    } finally {
      second.worker.stop();
      await second.running;
    }
  });
});
