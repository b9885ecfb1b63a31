// The broker goes away under a running ingest process and comes back: the same process reconnects
// by itself (kafkajs retry with backoff: ingest/README.md, "Delivery, failures, shutdown"), stays
// alive meanwhile, and every event written before and after the outage ends up in the projection,
// with the group's offsets at the end of the topics.
//
// The broker is killed with SIGKILL (no clean shutdown) and restarted with `stack.sh up`, which also
// checks that Kafka Connect and the Debezium connector run again for the e2e files after this one.
// The events go to private topics filled by a producer, so the test needs no connector meanwhile.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeEvent, sampleRow, uuidFor } from '@pda/ingest/testing';
import type { SourceTable } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import type { Kafka } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createTopics, deleteTopics, produceEvents } from './src/produce-events.ts';
import { kafkaClient, repoRoot, stackDir, stackEnv, waitFor } from './src/stack-env.ts';

const COMPANIES = 3;
const prefix = `outage${Date.now()}`;
const topic = (table: SourceTable) => `${prefix}.public.${table}`;
const companyIds = Array.from({ length: COMPANIES }, (_, c) => uuidFor(c, 11));

let lsn = 1_000;
/** `sites` creates n0 … n0+count-1, spread over the companies; returns their ids per company. */
function siteEvents(n0: number, count: number) {
  const events = [];
  const ids = new Map<string, string[]>(companyIds.map((id) => [id, []]));
  for (let n = n0; n < n0 + count; n++) {
    const company = companyIds[n % COMPANIES] as string;
    const row = sampleRow('sites', n, company);
    ids.get(company)?.push(row.id as string);
    events.push(
      encodeEvent(
        { table: 'sites', op: 'c', row, lsn: lsn++, tsMs: Date.now() },
        { topicPrefix: prefix, inlineSchema: true },
      ),
    );
  }
  return { events, ids };
}

function siteIdsInProjection(dataDir: string, company: string): Set<string> {
  try {
    const db = openCompanyReader(dataDir, company);
    try {
      return new Set(db.prepare('SELECT id FROM sites').pluck().all() as string[]);
    } finally {
      db.close();
    }
  } catch {
    return new Set(); // the file does not exist yet
  }
}

/** The admin port ingest bound (INGEST_ADMIN_PORT=0), from its 'ingest started' log line. */
function adminPortOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let pending = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const port = /"adminPort":(\d+)/.exec(line)?.[1];
        if (port) resolve(Number(port));
      }
    });
    child.once('exit', (code) => reject(new Error(`ingest exited (${code}) before it started`)));
  });
}

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

describe('the broker goes away under a running ingest process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-outage-'));
  const groupId = `e2e-outage-${randomUUID()}`;
  const children: ChildProcess[] = [];
  let kafka: Kafka;

  afterAll(async () => {
    for (const c of children) if (alive(c)) c.kill('SIGKILL');
    await deleteTopics(kafka, [topic('companies'), topic('sites')]);
  });

  it('the same process reconnects and applies everything, before and after', async () => {
    const env = stackEnv();
    kafka = kafkaClient('pda-outage-e2e', env);
    await createTopics(kafka, [topic('companies'), topic('sites')]);
    const companies = companyIds.map((id, c) =>
      encodeEvent(
        { table: 'companies', op: 'r', row: sampleRow('companies', c, id), lsn: lsn++, tsMs: Date.now() },
        { topicPrefix: prefix, inlineSchema: true },
      ),
    );
    const before = siteEvents(0, 300);
    await produceEvents(kafka, [...companies, ...before.events]);

    const child = spawn(process.execPath, [join(repoRoot, 'ingest/src/main.ts')], {
      env: {
        ...process.env,
        INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
        INGEST_SCHEMA_REGISTRY_URL: env.schemaRegistryUrl,
        INGEST_TOPIC_PREFIX: prefix,
        INGEST_GROUP_ID: groupId,
        INGEST_DATA_DIR: dataDir,
        INGEST_ADMIN_PORT: '0',
        INGEST_LOG_LEVEL: 'info', // its 'ingest started' line names the admin port
      },
      cwd: join(repoRoot, 'ingest'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const adminPort = adminPortOf(child);
    adminPort.catch(() => {}); // awaited below; an early exit fails the test there, with stderr
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    children.push(child);

    const allApplied = (expected: Map<string, string[]>) =>
      [...expected].every(([company, ids]) => {
        const stored = siteIdsInProjection(dataDir, company);
        return ids.every((id) => stored.has(id));
      });
    await waitFor('the events before the outage applied', () => allApplied(before.ids), {
      timeoutMs: 120_000,
      intervalMs: 250,
    });

    // ---- the broker goes away: SIGKILL, no clean shutdown ----
    const brokerPid = Number(readFileSync(join(stackDir(), 'run', 'kafka.pid'), 'utf8').trim());
    process.kill(brokerPid, 'SIGKILL');
    await waitFor(
      'the broker process to be gone',
      () => {
        try {
          process.kill(brokerPid, 0);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 30_000 },
    );
    // kafkajs retries with backoff meanwhile; the process must stay up and answer its liveness probe.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    expect(alive(child), `ingest exited while the broker was away:\n${stderr}`).toBe(true);
    expect((await fetch(`http://127.0.0.1:${await adminPort}/healthz`)).status).toBe(200);

    // ---- the broker comes back (and Connect + the connector are running again) ----
    await promisify(execFile)('bash', [join(repoRoot, 'dev-world/stack/stack.sh'), 'up'], {
      env: process.env,
      timeout: 240_000,
    });
    const after = siteEvents(300, 300);
    await produceEvents(kafka, after.events);

    await waitFor('the events after the outage applied by the same process', () => allApplied(after.ids), {
      timeoutMs: 150_000,
      intervalMs: 500,
    });
    expect(alive(child), `ingest exited after the outage:\n${stderr}`).toBe(true);
    expect(allApplied(before.ids)).toBe(true);
    for (const company of companyIds) {
      const expected = (before.ids.get(company)?.length ?? 0) + (after.ids.get(company)?.length ?? 0);
      expect(siteIdsInProjection(dataDir, company).size).toBe(expected);
    }

    // Offsets are committed after the apply: the group reaches the end of both topics.
    const offsetsAdmin = kafka.admin();
    await offsetsAdmin.connect();
    try {
      await waitFor(
        'the group offsets at the end of the topics',
        async () => {
          for (const t of [topic('companies'), topic('sites')]) {
            const [end] = await offsetsAdmin.fetchTopicOffsets(t);
            const [group] = await offsetsAdmin.fetchOffsets({ groupId, topics: [t] });
            if (group?.partitions[0]?.offset !== end?.high) return false;
          }
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
    } finally {
      await offsetsAdmin.disconnect();
    }

    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode, stderr).toBe(0);
  });
});
