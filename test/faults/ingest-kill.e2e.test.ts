// Fault campaign, `kill -9` of ingest (docs/resilience.md): a continuous writer changes two
// companies' rows in PostgreSQL through the real connector while the ingest process is killed with
// SIGKILL at random moments, 10 times in a row, and restarted each time on the same data directory
// and consumer group. Each restart is measured: spawn → first applied batch, and spawn → caught up
// (lag 0). At the end every row of the companies equals PostgreSQL's: nothing lost, nothing applied
// wrongly twice. The long variant (PDA_FAULTS_LONG=1) adds a 180,000-row load of a third company,
// so that the kills land in the middle of large batches.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { pause } from '../src/pause.ts';
import { settledComparison } from './support/compare.ts';
import { type IngestProcess, startIngest } from './support/ingest-process.ts';
import { caseRecord, longVariant, spread } from './support/result.ts';
import {
  committedChanges,
  createCompanies,
  faultTolerantPool,
  startContinuousWriter,
  writerRecord,
} from './support/writer.ts';

const KILLS = 10;
/** ingest's INGEST_SESSION_TIMEOUT_MS default (ingest/src/config.ts), not overridden here. */
const SESSION_TIMEOUT_SECONDS = 30;
const BULK_ROWS = longVariant() ? 180_000 : 0;

/** `rows` sites of `company` inserted in chunks of 2,000 (one transaction each), as a bulk import. */
async function bulkLoad(pool: pg.Pool, company: string, rows: number, stop: () => boolean) {
  for (let done = 0; done < rows && !stop(); done += 2_000) {
    await pool.query(
      `INSERT INTO sites (company_id, name, area, city, latitude, longitude)
       SELECT $1, 'Bulk lot ' || g, (g * 12.34) % 99999.99, 'bulk', 45.5 + g * 0.000001, -73.5
         FROM generate_series($2::int, $3::int) g`,
      [company, done + 1, Math.min(rows, done + 2_000)],
    );
  }
}

describe('fault: kill -9 of ingest, 10 times under a continuous writer', () => {
  const pool = faultTolerantPool();
  const dataDir = mkdtempSync(join(tmpdir(), 'fault-ingest-kill-'));
  const groupId = `e2e-fault-kill-${randomUUID()}`;
  const processes: IngestProcess[] = [];
  afterAll(async () => {
    for (const p of processes) if (p.alive()) await p.kill9();
    await pool.end();
  });

  it(
    'every restart applies again, and the projection ends equal to PostgreSQL',
    async () => {
      const record = caseRecord('ingest-kill');
      const [company, other] = (await createCompanies(pool, 'kill', 2, 30)) as [string, string];
      const [bulkCompany] = BULK_ROWS ? await createCompanies(pool, 'kill-bulk', 1, 1) : [];
      const start = () => {
        const p = startIngest({ dataDir, groupId });
        processes.push(p);
        return p;
      };
      let current = start();
      // The first start reads every data topic from the beginning: not a recovery, not measured.
      await current.caughtUpSeconds(240_000);

      const writer = startContinuousWriter(pool, { company, other });
      // The pipeline flows before the first kill: a change of the writer's applied (after a fault
      // case that restarted the broker or Connect, the connector may still be catching up, and a
      // restart's first applied batch would measure that instead of the takeover).
      const writerStartedAt = Date.now();
      await current.firstAppliedSeconds(120_000, writerStartedAt);
      let bulkDone = !bulkCompany;
      const bulk = bulkCompany
        ? bulkLoad(pool, bulkCompany, BULK_ROWS, () => false).finally(() => {
            bulkDone = true;
          })
        : Promise.resolve();
      /** Per restart: spawn → joined, and what its takeover logged (the diagnosis of a slow one). */
      const restarts: { joinedSeconds: number; firstAppliedSeconds: number; takeover: string[] }[] = [];
      const caughtUp: number[] = [];
      const killedAfterMs: number[] = [];
      let summary: Awaited<ReturnType<typeof writer.stop>>;
      try {
        for (let kill = 1; kill <= KILLS; kill++) {
          // A random moment: 0.5 to 3.5 s into the process's work (mid-batch, with the writer on).
          const wait = 500 + Math.floor(Math.random() * 3_000);
          killedAfterMs.push(wait);
          await pause(wait);
          await current.kill9();
          current = start();
          const firstAppliedSeconds = await current.firstAppliedSeconds();
          restarts.push({
            joinedSeconds: await current.joinedSeconds(),
            firstAppliedSeconds,
            takeover: current.takeoverLines(),
          });
          // Under the bulk load "caught up" may come late; the next kill waits for it either way,
          // so every restart is measured whole.
          caughtUp.push(await current.caughtUpSeconds(bulkDone ? 120_000 : 600_000));
        }
      } finally {
        summary = await writer.stop();
        await bulk;
      }
      await current.caughtUpSeconds(180_000);
      const companies = [company, other, ...(bulkCompany ? [bulkCompany] : [])];
      const comparison = await settledComparison(pool, dataDir, companies, { timeoutMs: 90_000 });
      const exitCode = await current.stop();

      const first = spread(restarts.map((r) => r.firstAppliedSeconds));
      const whole = spread(caughtUp);
      record.set({
        fault: `kill -9 of ingest, ${KILLS} times (random moments, 0.5-3.5 s apart) under a continuous writer${BULK_ROWS ? ` and a ${BULK_ROWS}-row load` : ''}`,
        whatHappened: `every restart took over the consumer group and applied again; spawn → first applied batch ${first.min}/${first.median}/${first.max} s, → caught up ${whole.min}/${whole.median}/${whole.max} s (min/median/max); ${comparison.rowsCompared} rows compared`,
        recoverySeconds: first.max,
        differences: comparison.differences.length,
        failedRequests: null,
        firstAppliedSeconds: first,
        caughtUpSeconds: whole,
        killedAfterMs,
        restarts,
        writer: writerRecord(summary),
        bulkRows: BULK_ROWS,
        sampleDifferences: comparison.differences.slice(0, 10),
      });
      expect(comparison.differences).toEqual([]);
      expect(comparison.rowsCompared).toBeGreaterThan(60);
      // The seed alone passes rowsCompared: the writer must have committed changes under the kills
      // (PostgreSQL stays up in this case, so no slice of it may fail).
      expect(committedChanges(summary), 'changes the writer committed').toBeGreaterThan(20);
      expect(summary.failedSlices, `writer slices that failed (first: ${summary.firstSliceError})`).toBe(0);
      // Each new process removes its dead predecessor from the group and gets the partitions at once
      // (docs/resilience.md); without that its join waits for the dead member's session to time out,
      // 27-30 s after the kill (its last heartbeat was at most a tenth of it before). Half of that
      // separates the two (measured: 2.2 s at most, 9.1 s under the long variant's large batches).
      const slowestJoin = restarts.reduce((a, b) => (b.joinedSeconds > a.joinedSeconds ? b : a));
      expect(
        slowestJoin.joinedSeconds,
        `slowest restart to joined, s (${JSON.stringify(slowestJoin)})`,
      ).toBeLessThan(SESSION_TIMEOUT_SECONDS / 2);
      const slowest = restarts.reduce((a, b) => (b.firstAppliedSeconds > a.firstAppliedSeconds ? b : a));
      expect(
        slowest.firstAppliedSeconds,
        `slowest restart to its first applied batch, s (${JSON.stringify(slowest)})`,
      ).toBeLessThan(SESSION_TIMEOUT_SECONDS / 2);
      expect(exitCode).toBe(0);
    },
    longVariant() ? 3_600_000 : 600_000,
  );
});
