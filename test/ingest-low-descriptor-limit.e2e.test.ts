// The ingest process under a low descriptor limit (`prlimit --nofile`), with changes spread over
// more companies than its writer cache can hold: every change is applied to the right company
// file, the process stays up, and its log and metrics say it is evicting
// (docs/operations.md#sizing-a-node). The events go to private topics filled by a producer.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import type { SourceTable } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import { metricSample } from '@pda/projections/testing';
import type { Kafka } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createTopics, deleteTopics, produceEvents } from './src/produce-events.ts';
import { kafkaClient, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

const LIMIT = 128;
const COMPANIES = 60;
const SITES_PER_COMPANY = 8;
const prefix = `lowfd${Date.now()}`;
const topic = (table: SourceTable) => `${prefix}.public.${table}`;
const companyIds = Array.from({ length: COMPANIES }, (_, c) => uuidFor(c, 13));

function siteCount(dataDir: string, company: string): number {
  try {
    const db = openCompanyReader(dataDir, company);
    try {
      return db.prepare('SELECT count(*) FROM sites').pluck().get() as number;
    } finally {
      db.close();
    }
  } catch {
    return 0; // the file does not exist yet
  }
}

describe(`ingest with ${LIMIT} file descriptors and ${COMPANIES} companies`, () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-lowfd-'));
  let child: ChildProcess | undefined;
  let kafka: Kafka | undefined;

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await deleteTopics(kafka, [topic('companies'), topic('sites')]);
  });

  it('applies every change while evicting, and says so in its log and metrics', async () => {
    const env = stackEnv();
    kafka = kafkaClient('pda-lowfd-e2e', env);
    await createTopics(kafka, [topic('companies'), topic('sites')]);
    let lsn = 1_000;
    const encode = (table: SourceTable, row: Record<string, unknown>) =>
      encodeEvent(
        { table, op: 'c', row, lsn: lsn++, tsMs: Date.now() },
        { topicPrefix: prefix, inlineSchema: true },
      );
    const events = companyIds.map((id, c) => encode('companies', sampleRow('companies', c, id)));
    // Round-robin over the companies: every batch touches all of them, more than the cache holds.
    for (let n = 0; n < COMPANIES * SITES_PER_COMPANY; n++) {
      events.push(encode('sites', sampleRow('sites', n, companyIds[n % COMPANIES] as string)));
    }
    await produceEvents(kafka, events);

    let output = '';
    child = spawn(
      'prlimit',
      [`--nofile=${LIMIT}:${LIMIT}`, process.execPath, join(repoRoot, 'ingest/src/main.ts')],
      {
        env: {
          ...process.env,
          INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
          INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
          INGEST_TOPIC_PREFIX: prefix,
          INGEST_GROUP_ID: `e2e-lowfd-${randomUUID()}`,
          INGEST_DATA_DIR: dataDir,
          INGEST_ADMIN_PORT: '0',
          INGEST_LOG_LEVEL: 'info',
          // Far more than 128 descriptors can hold: cut to fit, and said so at start.
          INGEST_MAX_OPEN_COMPANIES: '5000',
          // Small batches: many apply calls, each spanning every company.
          INGEST_MAX_BATCH_EVENTS: '100',
        },
        cwd: join(repoRoot, 'ingest'),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-200_000);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-200_000);
    });
    const exited = () => child?.exitCode !== null || child?.signalCode !== null;

    await waitFor(
      'every site applied to its company file',
      () => {
        if (exited()) throw new Error(`ingest exited:\n${output.slice(-4000)}`);
        return companyIds.every((id) => siteCount(dataDir, id) === SITES_PER_COMPANY);
      },
      { timeoutMs: 150_000, intervalMs: 500 },
    );
    expect(output).toContain('INGEST_MAX_OPEN_COMPANIES needs more file descriptors than the limit allows');
    const adminPort = Number(/"adminPort":(\d+)/.exec(output)?.[1]);
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    expect(metricSample(text, 'pda_ingest_process_max_fds')).toBe(LIMIT);
    // Half of 128 kept for sockets and the rest, three descriptors per file.
    expect(metricSample(text, 'pda_ingest_open_company_files_max')).toBe(21);
    expect(metricSample(text, 'pda_ingest_open_company_files')).toBeLessThanOrEqual(21);
    expect(metricSample(text, 'pda_ingest_company_files_evicted_total')).toBeGreaterThan(0);
    // Every company's file was opened at least once; how many were reopened depends on how the
    // chunks were grouped into apply calls (one call over all 60 companies reopens none).
    expect(metricSample(text, 'pda_ingest_company_files_opened_total')).toBeGreaterThanOrEqual(COMPANIES);
    expect(exited()).toBe(false);
    expect(output).not.toContain('"level":50');
  });
});
