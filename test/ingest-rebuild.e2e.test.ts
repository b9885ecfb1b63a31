// `rebuild` against the real stack: a new projection generation is built from the earliest offsets
// under a new consumer group and swapped in atomically; a running worker follows the swap and keeps
// applying new changes into the new generation, while the old generation stays readable on disk.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readlinkSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, createWorker, loadAvscTypes, parseConfig, rebuild, type Worker } from '@pda/ingest';
import { companyPath } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgPool, stackEnv, waitFor } from './src/stack-env.ts';

let pool: pg.Pool;
beforeAll(() => {
  pool = pgPool();
});
afterAll(async () => {
  await pool.end();
});

async function createCompanyWithSites(sites: number): Promise<string> {
  const company = randomUUID();
  await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, 'Rebuild e2e', 'USD')", [company]);
  await pool.query(
    "INSERT INTO sites (company_id, name, area) SELECT $1, 'Site ' || g, g * 1.25 FROM generate_series(1, $2::int) g",
    [company, sites],
  );
  return company;
}

function siteCount(dataDir: string, company: string): number {
  if (!existsSync(companyPath(dataDir, company))) return 0;
  const db = openCompanyReader(dataDir, company);
  try {
    return (db.prepare('SELECT count(*) AS n FROM sites').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('rebuild into a new generation and swap', () => {
  const root = mkdtempSync(join(tmpdir(), 'ingest-rebuild-'));
  const dataDir = join(root, 'current');
  const env = stackEnv();
  const config = parseConfig({
    INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
    INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
    INGEST_TOPIC_PREFIX: env.topicPrefix,
    INGEST_GROUP_ID: `e2e-rebuild-${randomUUID()}`,
    INGEST_DATA_DIR: dataDir,
    INGEST_ADMIN_PORT: '0',
    INGEST_LOG_LEVEL: 'warn',
  });
  const logger = createLogger('warn');
  let live: Worker | undefined;
  let running: Promise<void> | undefined;
  afterAll(async () => {
    live?.stop();
    await running;
  });

  it('builds the first generation, then a live worker follows a second rebuild', async () => {
    const avscTypes = await loadAvscTypes();
    const before = await createCompanyWithSites(25);

    // The first rebuild logs at info into memory: its progress lines are what operators watch.
    // readyMaxLag (INGEST_READY_MAX_LAG) 20, below the 26 events just written, so even on a fresh stack (topics
    // of a few events, read in well under a second) the rebuild is a catch-up and says when it is done.
    const progressLines: { msg: string; events?: number; meanEventsPerSecond?: number }[] = [];
    const first = await rebuild(
      { ...config, readyMaxLag: 20 },
      {
        logger: createLogger('info', 'rebuild', {
          write: (line: string) => progressLines.push(JSON.parse(line)),
        }),
        avscTypes,
      },
    );
    expect(readlinkSync(dataDir)).toBe(`current.generations/${first.generation}`);
    const caughtUp = progressLines.filter((line) => line.msg === 'caught up');
    expect(caughtUp).toHaveLength(1);
    expect(caughtUp[0]?.events).toBeGreaterThanOrEqual(26);
    expect(caughtUp[0]?.meanEventsPerSecond).toBeGreaterThan(0);
    expect(first.groupId).toBe(`${config.kafka.groupId}-${first.generation}`);
    await waitFor('first generation has the company', () => siteCount(dataDir, before) === 25, {
      timeoutMs: 30_000,
    });

    live = createWorker(config, { logger, avscTypes });
    running = live.run();
    const during = await createCompanyWithSites(10);
    await waitFor('live worker applies into the first generation', () => siteCount(dataDir, during) === 10, {
      timeoutMs: 60_000,
    });

    const sourceBefore = live.source();
    const second = await rebuild(config, { logger, avscTypes });
    expect(second.generation).not.toBe(first.generation);
    expect(realpathSync(dataDir)).toBe(realpathSync(second.dir));
    // The new generation was built from the earliest offsets: it has both companies already.
    expect(siteCount(second.dir, before)).toBe(25);
    expect(siteCount(second.dir, during)).toBe(10);
    // The old generation stays on disk, readable, for readers that have not switched yet.
    expect(siteCount(first.dir, before)).toBe(25);

    // The live worker notices the swap within a second, drains and closes the old generation's
    // files, then consumes again on the new one: until then it may still write to the old one.
    await waitFor('live worker switched to the new generation', () => live?.source() !== sourceBefore, {
      timeoutMs: 30_000,
    });
    const after = await createCompanyWithSites(7);
    await waitFor('live worker followed the swap', () => siteCount(second.dir, after) === 7, {
      timeoutMs: 60_000,
    });
    expect(siteCount(first.dir, after)).toBe(0);
  });
});
