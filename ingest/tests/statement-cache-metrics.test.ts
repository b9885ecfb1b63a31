import { join } from 'node:path';
import type { SourceTable } from '@pda/projections/model';
import { ProjectionStore } from '@pda/projections/write';
import { loadTableSchema } from '@pda/schemas';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { inProcessSink } from '../src/apply-thread/sink.ts';
import { createPipeline } from '../src/batch/pipeline.ts';
import { columnTypesFromAvsc, createDecoder } from '../src/decode/index.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { applyRecords, tempDataDir } from './support/apply.ts';
import { dumpDataDir } from './support/dump.ts';
import { fixtureRecords } from './support/fixtures.ts';

// The writer's prepared statements are bounded per open file (INGEST_MAX_STATEMENTS_PER_FILE,
// @pda/projections model/statement-lru.ts) and reported by each batch's result to the metrics.
describe('the writer statement cache in the metrics', () => {
  it('counts evictions and statements held; the projection is the same as with the default bound', async () => {
    const records = fixtureRecords();
    const dir = tempDataDir('statements-');
    const bounded = join(dir, 'bounded');
    const store = ProjectionStore.open({ dataDir: bounded, maxStatementsPerFile: 2 });
    const metrics = createMetrics();
    const pipeline = createPipeline({
      decoder: createDecoder({
        topicPrefix: 'pda',
        bareDecimalMode: 'precise',
        avscTypes: (table: SourceTable) => columnTypesFromAvsc(loadTableSchema(table)),
      }),
      sink: inProcessSink(store),
      metrics,
      logger: pino({ level: 'silent' }),
    });
    try {
      for (let i = 0; i < records.length; i += 5) await pipeline.process(records.slice(i, i + 5));
    } finally {
      store.close();
    }
    const evicted = (await metrics.statementsEvicted.get()).values[0]?.value ?? 0;
    const held = (await metrics.statementsHeld.get()).values[0]?.value ?? 0;
    expect(evicted).toBeGreaterThan(0);
    // control.sqlite and the open company files, two statements each at most.
    const open = (await metrics.openCompanyFiles.get()).values[0]?.value ?? 0;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(2 * (1 + open));

    const reference = join(dir, 'reference');
    await applyRecords(reference, records, 5);
    expect(dumpDataDir(bounded)).toEqual(dumpDataDir(reference));
  });
});
