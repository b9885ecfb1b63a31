// ingest against the real stack: rows written in PostgreSQL reach the right company file with exact
// decimals and UTC timestamps, from the shipped connector (Avro through the schema registry) and
// from a JsonConverter one; default-identity updates and deletes are routed to the right file;
// `kill -9` of an ingest child in the middle of a large batch, then a restart, ends with projections
// identical to PostgreSQL, compared row by row and column by column.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createWorker, loadAvscTypes, parseConfig, type Worker } from '@pda/ingest';
import { companyPath, TENANT_TABLES } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { converterConfig } from './src/avro-records.ts';
import { edgeValueSites } from './src/edge-sites.ts';
import { type PrivateConnector, startPrivateConnector } from './src/private-connector.ts';
import {
  expectProjectionEqualsPostgres,
  expectProjectionSettlesOnPostgres,
  type Row,
} from './src/projection-vs-postgres.ts';
import { inTransaction, kafkaClient, pgPool, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

let pool: pg.Pool;
beforeAll(() => {
  pool = pgPool();
});
afterAll(async () => {
  await pool.end();
});

async function countInProjection(dataDir: string, companyId: string, table: string): Promise<number> {
  if (!existsSync(companyPath(dataDir, companyId))) return 0;
  const db = openCompanyReader(dataDir, companyId);
  try {
    return (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

async function countInPostgres(table: string, companyId: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${table} WHERE company_id = $1`,
    [companyId],
  );
  return Number(rows[0]?.n);
}

// ---------- PostgreSQL writes ----------

async function createCompany(sites: number): Promise<string> {
  const company = randomUUID();
  const category = randomUUID();
  const key = randomUUID();
  await inTransaction(pool, [
    ["INSERT INTO companies (id, name, currency) VALUES ($1, 'Ingest e2e Snow & Ice', 'CAD')", [company]],
    [
      `INSERT INTO api_keys (id, name, last_four, key_sha256, scopes, expires_at)
       VALUES ($1::uuid, 'e2e', '9f3a', encode(digest($2::text, 'sha256'), 'hex'), '{sites:read,services:read}',
               '2031-06-30 23:59:59.5+02')`,
      [key, `svc_pk_e2e_${key}`],
    ],
    ['INSERT INTO api_key_companies (api_key_id, company_id) VALUES ($1, $2)', [key, company]],
    edgeValueSites(company, sites),
    [
      `INSERT INTO site_contacts (company_id, site_id, name, email)
       SELECT company_id, id, 'Contact ' || name, 'ops@example.com' FROM sites WHERE company_id = $1 LIMIT 50`,
      [company],
    ],
    [
      `INSERT INTO services (company_id, name, client_charge_type, client_rate_amount, client_rate_currency,
                             subcontractor_charge_type, subcontractor_rate_amount, subcontractor_rate_currency)
       SELECT $1, 'Plowing ' || g, 'hourly', 9999999999.99 - g, 'CAD', 'per_push', -0.01 * g, 'CAD'
       FROM generate_series(1, 20) AS g`,
      [company],
    ],
    [
      `INSERT INTO equipment_categories (id, company_id, name, group_name, default_client_rate_amount,
         default_client_rate_currency, default_subcontractor_rate_amount, default_subcontractor_rate_currency)
       VALUES ($1, $2, 'Loaders', 'loaders', 185.50, 'CAD', 0.05, 'CAD')`,
      [category, company],
    ],
    [
      `INSERT INTO equipment (company_id, category_id, name) SELECT $1, $2, 'Loader ' || g FROM generate_series(1, 10) g`,
      [company, category],
    ],
    [
      `INSERT INTO consumables (company_id, name, group_name, default_client_rate_amount, default_client_rate_currency,
         default_subcontractor_rate_amount, default_subcontractor_rate_currency)
       VALUES ($1, 'Rock salt', 'de_icing', 120.00, 'CAD', 95.10, 'CAD'), ($1, 'Brine', 'de_icing', 0.35, 'CAD', 0.2, 'CAD')`,
      [company],
    ],
  ]);
  return company;
}

/** Updates (before = null under default identity) and key-only deletes across the company's tables. */
async function updateAndDelete(company: string): Promise<void> {
  await pool.query(
    "UPDATE sites SET name = name || ' (renamed)', area = -0.01 WHERE company_id = $1 AND name LIKE 'Lot 1%'",
    [company],
  );
  await pool.query("UPDATE sites SET city = 'Montréal' WHERE company_id = $1 AND name LIKE 'Lot 2%'", [
    company,
  ]); // notes TOASTed, unchanged
  await pool.query('UPDATE services SET client_rate_amount = 0.10 WHERE company_id = $1', [company]);
  await pool.query('UPDATE equipment_categories SET name = $2 WHERE company_id = $1', [
    company,
    'Loaders (wheel)',
  ]);
  await pool.query("DELETE FROM site_contacts WHERE company_id = $1 AND name LIKE '%3'", [company]);
  await pool.query(
    "DELETE FROM sites WHERE company_id = $1 AND name LIKE 'Lot 3%' AND id NOT IN (SELECT site_id FROM site_contacts)",
    [company],
  );
  await pool.query("DELETE FROM consumables WHERE company_id = $1 AND name = 'Brine'", [company]);
}

function ingestConfig(dataDir: string, extra: Record<string, string> = {}) {
  const env = stackEnv();
  return {
    INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
    INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
    INGEST_TOPIC_PREFIX: env.topicPrefix,
    INGEST_GROUP_ID: `e2e-ingest-${randomUUID()}`,
    INGEST_DATA_DIR: dataDir,
    INGEST_ADMIN_PORT: '0',
    INGEST_LOG_LEVEL: 'warn',
    ...extra,
  };
}

async function waitUntilCaughtUp(dataDir: string, company: string, timeoutMs = 150_000): Promise<void> {
  await waitFor(
    `projection of ${company} to match PostgreSQL counts`,
    async () => {
      for (const table of TENANT_TABLES) {
        if ((await countInProjection(dataDir, company, table)) !== (await countInPostgres(table, company)))
          return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

describe('ingest worker on the real stack', () => {
  let worker: Worker;
  let running: Promise<void>;
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-'));

  beforeAll(async () => {
    const config = parseConfig(ingestConfig(dataDir));
    const logger = createLogger('warn');
    worker = createWorker(config, { logger, avscTypes: await loadAvscTypes() });
    running = worker.run();
  });
  afterAll(async () => {
    worker?.stop();
    await running;
  });

  it('creates land in the right company file with exact decimals and UTC timestamps', async () => {
    const company = await createCompany(300);
    await waitUntilCaughtUp(dataDir, company);
    expect(await expectProjectionEqualsPostgres(pool, dataDir, company)).toBeGreaterThan(300);
    const db = openCompanyReader(dataDir, company);
    try {
      const service = db.prepare("SELECT * FROM services WHERE name = 'Plowing 1'").get() as Row;
      expect(service.client_rate_amount).toBe('9999999998.99');
      expect(service.subcontractor_rate_amount).toBe('-0.01');
      const site = db.prepare("SELECT * FROM sites WHERE name = 'Lot 1'").get() as Row;
      expect(site.geocoded_at).toBe('2026-01-31T07:00:01.123456Z'); // +05:00 → UTC
      expect(site.created_at).toBe('2025-12-31T23:59:59.999999Z');
    } finally {
      db.close();
    }
  });

  it('default-identity updates and deletes are applied to the right file', async () => {
    const company = await createCompany(60);
    const other = await createCompany(5); // must stay untouched
    await waitUntilCaughtUp(dataDir, company);
    await updateAndDelete(company);
    await waitFor(
      'updates and deletes',
      async () =>
        (await countInProjection(dataDir, company, 'consumables')) === 1 &&
        (await countInProjection(dataDir, company, 'sites')) === (await countInPostgres('sites', company)),
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    // The last statement's effect is visible; give the earlier ones' events the same chance.
    await expectProjectionSettlesOnPostgres(pool, dataDir, company, {
      what: 'projection equal to PostgreSQL',
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    await waitUntilCaughtUp(dataDir, other);
    await expectProjectionEqualsPostgres(pool, dataDir, other);
  });

  it('the admin port reports ready, per-table counters and lag', async () => {
    const port = worker.adminPort();
    const ready = await waitFor('readyz', async () => {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`);
      return r.status === 200 ? r.json() : false;
    });
    expect(ready).toMatchObject({ status: 'ready', connected: true });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/pda_ingest_events_total\{table="sites",outcome="applied"\} [1-9]/);
    expect(metrics).toMatch(/pda_ingest_consumer_lag\{topic="pda.public.sites",partition="0"\} \d+/);
    expect(metrics).toMatch(/pda_ingest_freshness_seconds \d/);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});

// The shipped connector writes Avro; JSON stays supported (PDA_CONNECTOR_FORMAT=json, or a Connect
// of one's own that writes JSON): a private connector with JsonConverter (inline schemas) streams
// the same kind of changes into its own topics, decoded by ingest with no registry at all.
describe('JSON change events (JsonConverter with inline schemas)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-json-'));
  let connector: PrivateConnector;
  let worker: Worker;
  let running: Promise<void>;
  const kafka = kafkaClient('e2e-ingest-json');

  beforeAll(async () => {
    connector = await startPrivateConnector('json', {
      ...converterConfig('json'),
      'snapshot.mode': 'no_data',
    });
    const { INGEST_SCHEMA_REGISTRY_URL: _none, ...withoutRegistry } = ingestConfig(dataDir);
    const config = parseConfig({ ...withoutRegistry, INGEST_TOPIC_PREFIX: connector.topicPrefix });
    worker = createWorker(config, { logger: createLogger('warn'), avscTypes: await loadAvscTypes() });
    running = worker.run();
  });
  afterAll(async () => {
    worker?.stop();
    await running;
    await connector?.remove(kafka);
  });

  it('creates, updates and deletes converge on PostgreSQL', async () => {
    const company = await createCompany(60);
    await waitUntilCaughtUp(dataDir, company);
    await updateAndDelete(company);
    const rows = await expectProjectionSettlesOnPostgres(pool, dataDir, company, {
      what: 'JSON projection equal to PostgreSQL',
      timeoutMs: 60_000,
      intervalMs: 500,
    });
    expect(rows).toBeGreaterThan(50);
    const db = openCompanyReader(dataDir, company);
    try {
      const service = db.prepare("SELECT * FROM services WHERE name = 'Plowing 2'").get() as Row;
      expect(service.client_rate_amount).toBe('0.10'); // updated, exact
      expect(service.subcontractor_rate_amount).toBe('-0.02');
    } finally {
      db.close();
    }
  });
});

describe('kill -9 in the middle of a large batch', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-kill-'));
  const env = ingestConfig(dataDir, { INGEST_MAX_BATCH_EVENTS: '500', INGEST_LOG_LEVEL: 'info' });
  const children: ChildProcess[] = [];

  function startChild(): ChildProcess {
    const child = spawn(process.execPath, [join(repoRoot, 'ingest/src/main.ts')], {
      env: { ...process.env, ...env },
      cwd: join(repoRoot, 'ingest'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.resume();
    child.stderr?.resume();
    children.push(child);
    return child;
  }
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('restart converges on PostgreSQL exactly', async () => {
    const company = await createCompany(20_000);
    const first = startChild();
    // Wait until part of the company is applied, then SIGKILL mid-stream (no drain, no commit).
    const partial = await waitFor(
      'a partial apply',
      async () => {
        const n = await countInProjection(dataDir, company, 'sites');
        return n > 0 && n < 20_000 ? n : false;
      },
      { timeoutMs: 150_000, intervalMs: 20 },
    );
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    // The kill really interrupted the load: counted again after the process is gone, part is missing.
    const afterKill = await countInProjection(dataDir, company, 'sites');
    expect(afterKill).toBeGreaterThanOrEqual(partial);
    expect(afterKill).toBeLessThan(20_000);

    await updateAndDelete(company); // changes while ingest is down
    const second = startChild();
    await waitUntilCaughtUp(dataDir, company);
    const rows = await expectProjectionSettlesOnPostgres(pool, dataDir, company, {
      what: 'projection equal to PostgreSQL after restart',
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
    // 20,000 sites minus the ~1,100 deleted by updateAndDelete, plus the other tables.
    expect(rows).toBeGreaterThan(18_000);
    second.kill('SIGTERM');
    await new Promise((resolve) => second.once('exit', resolve));
    expect(second.exitCode).toBe(0);
  });
});
