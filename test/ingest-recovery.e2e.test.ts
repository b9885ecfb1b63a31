// Takeover after `kill -9`: the restarted ingest removes its dead predecessor from the consumer
// group (ingest/src/kafka/predecessor.ts) and applies again at once, instead of waiting for the dead
// member's session to time out. The session timeout is set to 120 s here, so a row applied within
// 60 s of the restart cannot have been applied by the old mechanism: this checks the mechanism, not
// a speed (the recovery time itself is measured by the fault campaign and reported, not asserted).
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memberFilePath, readRecordedMember } from '@pda/ingest';
import { companyPath } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestProcess, startIngest } from './faults/support/ingest-process.ts';
import { inTransaction, kafkaClient, pgPool, waitFor } from './src/stack-env.ts';

const SESSION_TIMEOUT_MS = 120_000;
const dataDir = mkdtempSync(join(tmpdir(), 'ingest-e2e-recovery-'));
const groupId = `e2e-recovery-${randomUUID()}`;
const children: IngestProcess[] = [];
let pool: pg.Pool;

beforeAll(() => {
  pool = pgPool();
});
afterAll(async () => {
  for (const c of children) if (c.alive()) await c.kill9();
  await pool.end();
});

/** The real ingest process (the fault campaign's harness), with a session timeout no test waits out. */
function startWorker(): IngestProcess {
  const child = startIngest({
    dataDir,
    groupId,
    env: { INGEST_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS) },
  });
  children.push(child);
  return child;
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
    const first = startWorker();
    const before = await insertSite(company);
    await waitFor('the first worker to apply', () => siteInProjection(company, before), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    const dead = readRecordedMember(memberFilePath(dataDir));
    expect(dead?.groupId).toBe(groupId);
    expect(await groupMembers()).toEqual([dead?.memberId]);

    await first.kill9();
    // Still a member: only its session timeout would remove it without the takeover.
    expect(await groupMembers()).toEqual([dead?.memberId]);

    const restartedAt = Date.now();
    const second = startWorker();
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

    expect(await second.stop()).toBe(0);
  });
});
