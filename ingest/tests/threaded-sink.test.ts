import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { companyPath } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createThreadedSink } from '../src/apply-thread/threaded-sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { createDecoder } from '../src/decode/index.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { uuidFor } from '../src/testing/index.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { dumpDataDir } from './support/dump.ts';
import { fixtureRecords } from './support/fixtures.ts';

const siteOf = (companyId: string) =>
  makeUpsert('sites', sampleRow('sites', { id: uuidFor(1, 78), company_id: companyId }), 100);

describe('apply thread', () => {
  it('applies the same batches to the same projection as the synchronous store, in order', async () => {
    const records = fixtureRecords();
    const reference = tempDataDir();
    await applyRecords(reference, records, 5);

    const dataDir = tempDataDir();
    const sink = createThreadedSink({ dataDir });
    const pipeline = createPipeline({
      decoder: createDecoder({ topicPrefix: 'pda', bareDecimalMode: 'precise', avscTypes: () => undefined }),
      sink,
      metrics: createMetrics(),
      logger: pino({ level: 'silent' }),
    });
    // Several batches in flight at once, as the consumer pipelines them: order must be kept.
    const inFlight = [];
    for (let i = 0; i < records.length; i += 5)
      inFlight.push(pipeline.apply(pipeline.prepare(records.slice(i, i + 5))));
    const summaries = await Promise.all(inFlight);
    await sink.close();
    expect(summaries.reduce((n, s) => n + s.summary.deadLettered, 0)).toBe(0);
    expect(dumpDataDir(dataDir)).toEqual(dumpDataDir(reference));
  });
});

describe('apply thread errors', () => {
  it('a batch the thread cannot apply rejects; the thread keeps serving the next batch', async () => {
    const sink = createThreadedSink({ dataDir: tempDataDir() });
    // A change that is not structurally a Change makes applyBatch throw inside the thread.
    await expect(sink.applyBatch([{ kind: 'bogus' } as never])).rejects.toThrow(Error);
    await expect(sink.applyBatch([])).resolves.toMatchObject({ applied: 0 });
    await sink.close();
  });

  // What the retry/poison split reads (name, code) must survive the thread hop, and the stack must
  // still show where in the apply thread it failed.
  it('a ProjectionError keeps its name, code, message and stack', async () => {
    const dataDir = tempDataDir();
    const companyId = uuidFor(1, 77);
    // A company file written by a newer ingest: the writer refuses it (projections/src/model/migrate.ts).
    mkdirSync(dirname(companyPath(dataDir, companyId)), { recursive: true });
    const newer = new Database(companyPath(dataDir, companyId));
    newer.pragma('user_version = 999');
    newer.close();
    const sink = createThreadedSink({ dataDir });
    try {
      const error = await sink.applyBatch([siteOf(companyId)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ name: 'ProjectionVersionError', code: 'projection_too_new' });
      expect((error as Error).message).toMatch(/has schema version 999; this code knows version \d+/);
      expect((error as Error).stack).toMatch(/^ProjectionVersionError: .*schema version 999/);
      expect((error as Error).stack).toContain('migrate.ts');
    } finally {
      await sink.close();
    }
  });

  it('a SqliteError keeps its SQLITE_ code', async () => {
    const dataDir = tempDataDir();
    const companyId = uuidFor(2, 77);
    // A directory where the company file should be: SQLite cannot open it.
    mkdirSync(companyPath(dataDir, companyId), { recursive: true });
    const sink = createThreadedSink({ dataDir });
    try {
      const error = await sink.applyBatch([siteOf(companyId)]).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'SqliteError', code: 'SQLITE_CANTOPEN' });
      expect((error as Error).stack).toMatch(/^SqliteError: /);
    } finally {
      await sink.close();
    }
  });
});
