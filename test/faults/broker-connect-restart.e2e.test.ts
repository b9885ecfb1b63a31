// Fault campaign, the Kafka broker and Kafka Connect (docs/resilience.md): under a continuous writer
// and a running ingest process, the broker is killed with SIGKILL and started again, then Kafka
// Connect is killed with SIGKILL and started again (`stack.sh stop <component> --kill`, then
// `stack.sh up`). Debezium resumes from the offsets Connect stored (flushed every second) and
// PostgreSQL's replication slot, so what it re-sends after the kill is at most the last second of
// changes, which ingest's version guard skips. The same ingest process rides through both outages.
// At the end every row of the companies equals PostgreSQL's. The stack is restored in every case.
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

// How long a component stays down while the writer goes on.
const DOWN_MS = longVariant() ? 60_000 : 5_000;

describe('fault: the Kafka broker and Kafka Connect killed and restarted under a continuous writer', () => {
  const pool = faultTolerantPool();
  const dataDir = mkdtempSync(join(tmpdir(), 'fault-broker-connect-'));
  let ingest: IngestProcess | undefined;
  afterAll(async () => {
    if (ingest?.alive()) await ingest.kill9();
    // Whatever happened above, the next e2e file needs the whole stack.
    await stackSh('up');
    await pool.end();
  });

  it(
    'ingest rides through both outages and the projection ends equal to PostgreSQL',
    async () => {
      const record = caseRecord('broker-connect-restart');
      const [company, other] = (await createCompanies(pool, 'broker-connect', 2, 30)) as [string, string];
      ingest = startIngest({ dataDir, groupId: `e2e-fault-broker-${randomUUID()}` });
      await ingest.caughtUpSeconds(240_000);
      const writer = startContinuousWriter(pool, { company, other });
      const connector = watchConnector();
      const phases: Record<string, unknown>[] = [];
      let summary: Awaited<ReturnType<typeof writer.stop>>;
      try {
        for (const component of ['kafka', 'connect'] as const) {
          await pause(2_000);
          const skippedBefore = await ingest.metric('pda_ingest_events_total', 'outcome="skipped"');
          // `stack.sh up` starts the killed component again.
          const { upStarted, figures } = await outage(ingest, [component, '--kill'], DOWN_MS);
          phases.push({
            component,
            ...figures,
            ingestAlive: ingest.alive(),
            ingestWarnings: ingest.warnings(upStarted - DOWN_MS),
            redeliveredEventsSkipped:
              (await ingest.metric('pda_ingest_events_total', 'outcome="skipped"')) - skippedBefore,
          });
          expect(ingest.alive(), ingest.stderr()).toBe(true);
        }
      } finally {
        summary = await writer.stop();
      }
      const statesSeen = await connector.stop();
      await ingest.caughtUpSeconds(120_000);
      const comparison = await settledComparison(pool, dataDir, [company, other], { timeoutMs: 90_000 });
      const exitCode = await ingest.stop();
      writeLog(
        'broker-connect-restart',
        'ingest',
        ingest.lines.filter((l) => l.msg !== 'batch applied'),
      );

      const slowest = Math.max(...phases.map((p) => Number(p.caughtUpSeconds)));
      record.set({
        fault: `Kafka broker SIGKILL, down ${DOWN_MS / 1000} s, restarted; then Kafka Connect SIGKILL, down ${DOWN_MS / 1000} s, restarted; continuous writer throughout`,
        whatHappened: `the same ingest process reconnected by itself both times; Debezium resumed from its stored offsets (connector states seen: ${statesSeen.join(', ')}); ${phases.map((p) => `${p.component}: events in Kafka again ${p.eventsInKafkaAgainSeconds} s, ingest applying again ${p.appliedAgainSeconds} s and caught up ${p.caughtUpSeconds} s after 'stack.sh up' began (${p.redeliveredEventsSkipped} re-sent events skipped)`).join('; ')}; ${comparison.rowsCompared} rows compared`,
        recoverySeconds: slowest,
        differences: comparison.differences.length,
        failedRequests: null,
        phases,
        connectorStatesSeen: statesSeen,
        writer: writerRecord(summary),
        sampleDifferences: comparison.differences.slice(0, 10),
      });
      expect(comparison.differences).toEqual([]);
      expect(statesSeen.some((s) => s.includes('FAILED'))).toBe(false);
      // Without this the case could pass with no change to carry through the outages: PostgreSQL
      // stays up here, so the writer commits throughout and no slice of it may fail.
      expect(committedChanges(summary), 'changes the writer committed').toBeGreaterThan(20);
      expect(summary.failedSlices, `writer slices that failed (first: ${summary.firstSliceError})`).toBe(0);
      expect(exitCode).toBe(0);
    },
    longVariant() ? 1_200_000 : 600_000,
  );
});
