/**
 * The embedded replay source: captured Debezium records from a JSONL file through the SAME
 * decode → apply pipeline as the Kafka worker (no Kafka needed; analysts and tests).
 *
 * Formats: JSON records (with or without inline schema) and Avro records in the registry's wire
 * format (`keyBase64`/`valueBase64`, read-jsonl.ts). Avro needs the schema registry the records'
 * ids belong to (`schemaRegistryUrl`): their writer schemas are fetched once per id before each
 * chunk, as the worker does. Without a registry, or when it does not answer within
 * `schemaRegistryTimeoutMs`, the replay stops with a ReplayError naming the line (nothing of that
 * chunk is applied): a replay is run by hand, so waiting for the registry as the worker does, or
 * dead-lettering events that are not bad, would both be wrong.
 */
import type { SourceTable } from '@pda/projections/model';
import { type DeadLetter, ProjectionStore } from '@pda/projections/write';
import type { Logger } from 'pino';
import { inProcessSink } from '../apply-thread/sink.ts';
import { type BatchSummary, createPipeline } from '../batch/pipeline.ts';
import {
  type ColumnType,
  createDecoder,
  type RawRecord,
  schemaIdOf,
  WriterSchemas,
} from '../decode/index.ts';
import { createMetrics } from '../observability/metrics.ts';
import {
  createSchemaRegistryClient,
  createSchemaResolver,
  type SchemaResolver,
} from '../schema-registry/index.ts';
import { type ReplayLine, readReplayFile } from './read-jsonl.ts';

export interface ReplayOptions {
  readonly file: string;
  readonly dataDir: string;
  readonly topicPrefix: string;
  readonly bareDecimalMode: 'precise' | 'string';
  readonly batchSize: number;
  readonly avscTypes: (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;
  readonly logger: Logger;
  /** The schema registry's Confluent-compatible API, for Avro lines (`--schema-registry-url`). */
  readonly schemaRegistryUrl?: string | undefined;
  readonly schemaRegistryTimeoutMs?: number;
}

/** A replay that cannot go on (Avro lines without a usable registry): one line, exit 1. */
export class ReplayError extends Error {
  override readonly name = 'ReplayError';
}

export type ReplayTotals = Omit<BatchSummary, 'durationMs' | 'filesOpened' | 'filesEvicted'> & {
  readonly batches: number;
};

export async function replayFile(options: ReplayOptions): Promise<ReplayTotals> {
  const writerSchemas = new WriterSchemas();
  const resolver = options.schemaRegistryUrl
    ? createSchemaResolver({
        client: createSchemaRegistryClient({
          url: options.schemaRegistryUrl,
          timeoutMs: Math.min(options.schemaRegistryTimeoutMs ?? 30_000, 10_000),
        }),
        schemas: writerSchemas,
        logger: options.logger.child({ component: 'schema-registry' }),
        maxBackoffMs: 2_000,
      })
    : undefined;
  const store = ProjectionStore.open({ dataDir: options.dataDir });
  const decoder = createDecoder({
    topicPrefix: options.topicPrefix,
    bareDecimalMode: options.bareDecimalMode,
    avscTypes: options.avscTypes,
    writerSchemas,
  });
  const pipeline = createPipeline({
    decoder,
    sink: inProcessSink(store),
    metrics: createMetrics(),
    logger: options.logger,
  });
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
            reason: l.invalid,
          });
      }
      await fetchWriterSchemas(records, lines, writerSchemas, resolver, options);
      const s = await pipeline.process(records, invalid);
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

/** Makes sure every Avro id of the chunk has its writer schema, or throws ReplayError. */
async function fetchWriterSchemas(
  records: readonly RawRecord[],
  lines: readonly ReplayLine[],
  schemas: WriterSchemas,
  resolver: SchemaResolver | undefined,
  options: ReplayOptions,
): Promise<void> {
  const firstMissing = () => {
    for (const [i, record] of records.entries()) {
      for (const bytes of [record.key, record.value]) {
        const id = schemaIdOf(bytes);
        if (id !== undefined && !schemas.has(id)) return { id, record, index: i };
      }
    }
    return undefined;
  };
  if (!firstMissing()) return;
  if (resolver) {
    await resolver.resolve(records, {
      signal: AbortSignal.timeout(options.schemaRegistryTimeoutMs ?? 30_000),
    });
  }
  const missing = firstMissing();
  if (!missing) return;
  const lineNo = lineOf(lines, missing.record);
  const where = `${options.file}${lineNo === undefined ? '' : ` line ${lineNo}`} (${missing.record.topic})`;
  if (!resolver) {
    throw new ReplayError(
      `${where} is Avro (writer schema ${missing.id}): pass --schema-registry-url with the registry its ids belong to (replay reads JSON lines and Avro lines with a registry)`,
    );
  }
  const why = resolver.state().error ?? 'no answer';
  throw new ReplayError(
    `${where}: writer schema ${missing.id} not fetched from ${options.schemaRegistryUrl} within ${options.schemaRegistryTimeoutMs ?? 30_000} ms: ${why}`,
  );
}

function lineOf(lines: readonly ReplayLine[], record: RawRecord): number | undefined {
  const found = lines.find((l) => 'record' in l && l.record === record);
  return found && 'record' in found ? found.lineNo : undefined;
}
