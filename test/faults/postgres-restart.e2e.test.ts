// Fault campaign, PostgreSQL restarted while the connector streams (docs/resilience.md): under a
// continuous writer and a running ingest process, PostgreSQL is stopped with `pg_ctl stop -m fast`
// (sessions ended, a checkpoint, a clean exit) and later with `-m immediate` (no checkpoint: crash
// recovery at the next start), each time started again with `stack.sh up`. The replication slot
// survives both; Debezium's task loses its connection, logs "Retry N of unlimited retries"
// (errors.max.retries defaults to -1) and restarts itself every 10 s until PostgreSQL answers, so
// the task never reaches FAILED and no operator step is needed (checked here). The writer's changes
// that PostgreSQL refused while down are abandoned; everything PostgreSQL committed reaches the
// projection, which ends equal to PostgreSQL.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pause } from '../src/pause.ts';
import { settledComparison } from './support/compare.ts';
import { type IngestProcess, startIngest } from './support/ingest-process.ts';
import { caseRecord, longVariant, writeLog } from './support/result.ts';
import { outage, stackSh, watchConnector } from './support/stack-control.ts';
import {
  committedChanges,
  createCompanies,
  faultTolerantPool,
  startContinuousWriter,
  writerRecord,
} from './support/writer.ts';

const DOWN_MS = longVariant() ? 60_000 : 3_000;

describe('fault: PostgreSQL restarted (fast, then immediate) while the connector streams', () => {
  const pool = faultTolerantPool();
  const dataDir = mkdtempSync(join(tmpdir(), 'fault-postgres-'));
  let ingest: IngestProcess | undefined;
  afterAll(async () => {
    if (ingest?.alive()) await ingest.kill9();
    await stackSh('up'); // whatever happened above, the next e2e file needs the whole stack
    await pool.end();
  });

  it(
    'the connector recovers by itself and the projection ends equal to PostgreSQL',
    async () => {
      const record = caseRecord('postgres-restart');
      const [company, other] = (await createCompanies(pool, 'postgres', 2, 30)) as [string, string];
      ingest = startIngest({ dataDir, groupId: `e2e-fault-postgres-${randomUUID()}` });
      await ingest.caughtUpSeconds(240_000);
      const writer = startContinuousWriter(pool, { company, other });
      const phases: Record<string, unknown>[] = [];
      const statesSeen = new Set<string>();
      let summary: Awaited<ReturnType<typeof writer.stop>>;
      try {
        for (const mode of ['--fast', '--immediate'] as const) {
          await pause(2_000);
          const connector = watchConnector();
          const { figures } = await outage(ingest, ['postgres', mode], DOWN_MS);
          const states = await connector.stop();
          for (const s of states) statesSeen.add(s);
          phases.push({
            mode,
            ...figures,
            connectorStatesSeen: states,
          });
        }
      } finally {
        summary = await writer.stop();
      }
      await ingest.caughtUpSeconds(120_000);
      const comparison = await settledComparison(pool, dataDir, [company, other], { timeoutMs: 90_000 });
      const exitCode = await ingest.stop();
      writeLog(
        'postgres-restart',
        'ingest',
        ingest.lines.filter((l) => l.msg !== 'batch applied'),
      );

      record.set({
        fault: `PostgreSQL stopped with pg_ctl -m fast, down ${DOWN_MS / 1000} s, started; then -m immediate, down ${DOWN_MS / 1000} s, started; continuous writer throughout`,
        whatHappened: `Debezium's task retried by itself (never FAILED; states seen: ${[...statesSeen].join(', ')}); ${phases.map((p) => `${p.mode}: events in Kafka again ${p.eventsInKafkaAgainSeconds} s, ingest applying again ${p.appliedAgainSeconds} s, caught up ${p.caughtUpSeconds} s after 'stack.sh up' began`).join('; ')}; the writer's changes refused while PostgreSQL was down were abandoned (${summary.abandoned} + ${summary.failedSlices} slices); ${comparison.rowsCompared} rows compared`,
        recoverySeconds: Math.max(...phases.map((p) => Number(p.caughtUpSeconds))),
        differences: comparison.differences.length,
        failedRequests: null,
        phases,
        writer: writerRecord(summary),
        sampleDifferences: comparison.differences.slice(0, 10),
      });
      expect(comparison.differences).toEqual([]);
      expect([...statesSeen].some((s) => s.includes('FAILED'))).toBe(false);
      // The writer must have committed changes around the restarts (they are what the comparison
      // checks). A change PostgreSQL refuses while down is counted as abandoned by writeRandomly, not
      // as a failed slice; a slice fails only when an error escapes that handling, which a restart
      // can do at most to the slice it interrupts (a late transaction's connection terminated under
      // it): one per restart, two here. More means the writer failed for another reason.
      expect(committedChanges(summary), 'changes the writer committed').toBeGreaterThan(20);
      expect(
        summary.failedSlices,
        `writer slices that failed (first: ${summary.firstSliceError})`,
      ).toBeLessThanOrEqual(2);
      expect(exitCode).toBe(0);
    },
    longVariant() ? 1_200_000 : 600_000,
  );
});
