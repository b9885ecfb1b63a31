/**
 * The one decode → apply path, shared by the Kafka worker, `replay` and the benchmark: a list of
 * raw records in, one committed apply call, metrics, and ONE log line per batch (never per row).
 */
import type { Change, DeadLetter } from '@pda/projections';
import type { Logger } from 'pino';
import type { Decoder, RawRecord } from '../decode/index.ts';
import type { IngestMetrics } from '../ops/metrics.ts';
import type { ApplySink } from './sink.ts';

export interface BatchSummary {
  readonly events: number;
  readonly applied: number;
  readonly skipped: number;
  readonly deadLettered: number;
  readonly ignored: number;
  readonly companies: number;
  readonly durationMs: number;
}

export interface Pipeline {
  /** `invalid`: records rejected before decoding (unreadable replay lines), stored as dead letters. */
  process(records: readonly RawRecord[], invalid?: readonly DeadLetter[]): BatchSummary;
}

const textOf = (bytes: Uint8Array | string | null): string | null =>
  bytes === null ? null : typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');

export function createPipeline(deps: {
  decoder: Decoder;
  sink: ApplySink;
  metrics: IngestMetrics;
  logger: Logger;
}): Pipeline {
  const { decoder, sink, metrics, logger } = deps;
  // A reason is logged once per process (then only counted), so a poison stream cannot flood logs.
  const loggedReasons = new Set<string>();

  return {
    process(records, invalid = []) {
      const started = performance.now();
      const changes: Change[] = [];
      const deadLetters: DeadLetter[] = [...invalid];
      let ignored = 0;
      let lastTsMs: number | undefined;
      for (const record of records) {
        const result = decoder(record);
        if (result.type === 'change') {
          const { topic, partition, offset } = record;
          changes.push({ ...result.change, origin: { topic, partition, offset } });
          lastTsMs = Math.max(lastTsMs ?? 0, result.change.position.tsMs);
        } else if (result.type === 'ignored') {
          ignored++;
          metrics.ignored.inc({ reason: result.reason });
        } else {
          const { topic, partition, offset } = record;
          deadLetters.push({
            topic,
            partition,
            offset,
            key: textOf(record.key),
            value: textOf(record.value),
            reason: result.reason,
          });
          if (!loggedReasons.has(result.reason) && loggedReasons.size < 1000) {
            loggedReasons.add(result.reason);
            logger.warn(
              { topic, partition, offset, reason: result.reason },
              'dead letter (this reason is logged once)',
            );
          }
        }
      }
      const result =
        changes.length + deadLetters.length > 0 ? sink.applyBatch(changes, { deadLetters }) : undefined;
      for (const [table, counts] of Object.entries(result?.tables ?? {})) {
        if (counts.applied) metrics.events.inc({ table, outcome: 'applied' }, counts.applied);
        if (counts.skipped) metrics.events.inc({ table, outcome: 'skipped' }, counts.skipped);
        if (counts.rejected) metrics.events.inc({ table, outcome: 'dead_lettered' }, counts.rejected);
      }
      for (const dl of deadLetters) {
        metrics.events.inc({ table: dl.topic.split('.').at(-1) ?? 'unknown', outcome: 'dead_lettered' });
      }
      if (lastTsMs !== undefined && (result?.applied ?? 0) > 0) metrics.lastSourceTsMs = lastTsMs;
      const durationMs = performance.now() - started;
      metrics.batchDuration.observe(durationMs / 1000);
      const summary: BatchSummary = {
        events: records.length + invalid.length,
        applied: result?.applied ?? 0,
        skipped: result?.skipped ?? 0,
        deadLettered: result?.deadLettered ?? deadLetters.length,
        ignored,
        companies: result?.companies ?? 0,
        durationMs: Math.round(durationMs * 10) / 10,
      };
      logger.info(summary, 'batch applied');
      return summary;
    },
  };
}
