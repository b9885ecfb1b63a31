/**
 * The embedded replay source: captured Debezium records from a JSONL file through the SAME
 * decode → apply pipeline as the Kafka worker (no Kafka needed; analysts and tests).
 */
import { type DeadLetter, ProjectionStore, type SourceTable } from '@pda/projections';
import type { Logger } from 'pino';
import { type BatchSummary, createPipeline } from '../apply/pipeline.ts';
import { type ColumnType, createDecoder, type RawRecord } from '../decode/index.ts';
import { createMetrics } from '../ops/metrics.ts';
import { readReplayFile } from './read-jsonl.ts';

export interface ReplayOptions {
  readonly file: string;
  readonly dataDir: string;
  readonly topicPrefix: string;
  readonly bareDecimalMode: 'precise' | 'string';
  readonly batchSize: number;
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly logger: Logger;
}

export type ReplayTotals = Omit<BatchSummary, 'durationMs' | 'filesOpened' | 'filesEvicted'> & {
  readonly batches: number;
};

export async function replayFile(options: ReplayOptions): Promise<ReplayTotals> {
  const store = ProjectionStore.open({ dataDir: options.dataDir });
  const decoder = createDecoder({
    topicPrefix: options.topicPrefix,
    bareDecimalMode: options.bareDecimalMode,
    avscTypes: options.avscTypes,
  });
  const pipeline = createPipeline({ decoder, sink: store, metrics: createMetrics(), logger: options.logger });
  const totals = { events: 0, applied: 0, skipped: 0, deadLettered: 0, ignored: 0, companies: 0, batches: 0 };
  try {
    for await (const lines of readReplayFile(options.file, options.batchSize)) {
      const records: RawRecord[] = [];
      const invalid: DeadLetter[] = [];
      for (const l of lines) {
        if ('record' in l) records.push(l.record);
        // A line that is not a record is kept as a dead letter named by file and line number.
        else
          invalid.push({
            topic: `replay:${options.file}`,
            partition: 0,
            offset: String(l.line),
            key: null,
            value: null,
            reason: l.invalid,
          });
      }
      const s = pipeline.process(records, invalid);
      totals.events += s.events;
      totals.applied += s.applied;
      totals.skipped += s.skipped;
      totals.deadLettered += s.deadLettered;
      totals.ignored += s.ignored;
      totals.companies += s.companies;
      totals.batches++;
    }
  } finally {
    store.close();
  }
  return totals;
}
