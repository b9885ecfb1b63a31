// Takeover after `kill -9`: the restarted ingest removes its dead predecessor from the consumer
// group (ingest/src/kafka/predecessor.ts) and applies again at once, instead of waiting for the dead
// member's session to time out. The session timeout is set to 120 s here, so a row applied within
// 60 s of the restart cannot have been applied by the old mechanism: this checks the mechanism, not
// a speed (the recovery time itself is measured by the fault campaign and reported, not asserted).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memberFilePath, readRecordedMember } from '@pda/ingest';
import { companyPath, openCompanyReader } from '@pda/projections';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, kafkaClient, pgPool, repoRoot, stackEnv, waitFor } from './src/stack-env.ts';

const SESSION_TIMEOUT_MS = 120_000;
const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-recovery-'));
const groupId = `e2e-recovery-${randomUUID()}`;
const children: ChildProcess[] = [];
let pool: pg.Pool;

beforeAll(() => {
  pool = pgPool();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await pool.end();
});

interface Child {
  readonly process: ChildProcess;
  readonly lines: Record<string, unknown>[];
}

function startIngest(): Child {
  const env = stackEnv();
  const child = spawn(process.execPath, [join(repoRoot, 'ingest/src/main.ts')], {
    env: {
      ...process.env,
      INGEST_KAFKA_BROKERS: env.kafkaBrokers.join(','),
      INGEST_TOPIC_PREFIX: env.topicPrefix,
      INGEST_GROUP_ID: groupId,
      INGEST_DATA_DIR: dataDir,
      INGEST_ADMIN_PORT: '0',
      INGEST_LOG_LEVEL: 'info',
      INGEST_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      ...(process.env.PDA_SCHEMA_REGISTRY_URL
        ? { INGEST_SCHEMA_REGISTRY_URL: process.env.PDA_SCHEMA_REGISTRY_URL }
        : {}),
    },
    cwd: join(repoRoot, 'ingest'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  child.stderr?.resume();
  children.push(child);
  return { process: child, lines };
}

async function siteInProjection(company: string, siteId: string): Promise<boolean> {
  if (!existsSync(companyPath(dataDir, company))) return false;
  const db = openCompanyReader(dataDir, company);
  try {
    return db.prepare('SELECT 1 FROM sites WHERE id = ?').get(siteId) !== undefined;
  } finally {
    db.close();
  }
}

async function insertSite(company: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    "INSERT INTO sites (company_id, name) VALUES ($1, 'Recovery lot') RETURNING id",
    [company],
  );
  return rows[0]?.id as string;
}

async function groupMembers(): Promise<string[]> {
  const admin = kafkaClient('e2e-recovery-check').admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    return (groups[0]?.members ?? []).map((m) => m.memberId);
  } finally {
    await admin.disconnect();
  }
}

describe('ingest restarted after kill -9', () => {
  it('removes the dead member from the group and applies before its session would time out', async () => {
    const company = randomUUID();
    await inTransaction(pool, [
      ["INSERT INTO companies (id, name, currency) VALUES ($1, 'Recovery e2e', 'EUR')", [company]],
    ]);
    const first = startIngest();
    const before = await insertSite(company);
    await waitFor('the first worker to apply', () => siteInProjection(company, before), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const dead = readRecordedMember(memberFilePath(dataDir));
    expect(dead?.groupId).toBe(groupId);
    expect(await groupMembers()).toEqual([dead?.memberId]);

    first.process.kill('SIGKILL');
    await new Promise((resolve) => first.process.once('exit', resolve));
    // Still a member: only its session timeout would remove it without the takeover.
    expect(await groupMembers()).toEqual([dead?.memberId]);

    const restartedAt = Date.now();
    const second = startIngest();
    const after = await insertSite(company);
    await waitFor('the restarted worker to apply', () => siteInProjection(company, after), {
      timeoutMs: SESSION_TIMEOUT_MS / 2,
      intervalMs: 100,
    });
    console.log(`restart → applied in ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`);

    expect(second.lines.some((l) => l.msg === 'removed the previous worker from the consumer group')).toBe(
      true,
    );
    const members = await groupMembers();
    expect(members).toHaveLength(1);
    expect(members[0]).not.toBe(dead?.memberId);
    expect(readRecordedMember(memberFilePath(dataDir))?.memberId).toBe(members[0]);

    second.process.kill('SIGTERM');
    await new Promise((resolve) => second.process.once('exit', resolve));
    expect(second.process.exitCode).toBe(0);
  });
});
