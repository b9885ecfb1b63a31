/** Runs records through the real decode → apply pipeline into a data directory (one store per call). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SourceTable } from '@pda/projections/model';
import { ProjectionStore } from '@pda/projections/write';
import { loadTableSchema } from '@pda/schemas';
import { pino } from 'pino';
import { inProcessSink } from '../../src/apply-thread/sink.ts';
import { createPipeline } from '../../src/batch/pipeline.ts';
import {
  columnTypesFromAvsc,
  createDecoder,
  type RawRecord,
  type WriterSchemas,
} from '../../src/decode/index.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

const avscTypes = (table: SourceTable) => columnTypesFromAvsc(loadTableSchema(table));

export const tempDataDir = (name = 'ingest-test-') => mkdtempSync(join(tmpdir(), name));

/** `writerSchemas`: for Avro records (tests/support/fixtures.ts, avroFixture). */
export async function applyRecords(
  dataDir: string,
  records: readonly RawRecord[],
  batchSize = 10_000,
  writerSchemas?: WriterSchemas,
) {
  const store = ProjectionStore.open({ dataDir });
  const metrics = createMetrics();
  const pipeline = createPipeline({
    decoder: createDecoder({
      topicPrefix: 'pda',
      bareDecimalMode: 'precise',
      avscTypes,
      ...(writerSchemas ? { writerSchemas } : {}),
    }),
    sink: inProcessSink(store),
    metrics,
    logger: pino({ level: 'silent' }),
  });
  try {
    const totals = { applied: 0, skipped: 0, deadLettered: 0, ignored: 0 };
    for (let i = 0; i < records.length; i += batchSize) {
      const s = await pipeline.process(records.slice(i, i + batchSize));
      totals.applied += s.applied;
      totals.skipped += s.skipped;
      totals.deadLettered += s.deadLettered;
      totals.ignored += s.ignored;
    }
    return { totals, metrics };
  } finally {
    store.close();
  }
}
