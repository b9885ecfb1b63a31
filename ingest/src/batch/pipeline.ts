/**
 * The one decode → apply path, shared by the Kafka worker, `replay` and the benchmark: raw records
 * in, one committed apply call, metrics, and ONE log line per batch (never per row).
 *
 * Two phases so the Kafka worker can overlap them on two cores: `prepare` decodes on the calling
 * thread; `apply` commits through the sink (apply-thread/sink.ts: in the apply thread, apply-thread/threaded-sink.ts, or on
 * this thread). `process` = both, one batch after the other (replay, tests).
 *
 * Chunks prepared while earlier ones are being applied are merged into one apply call
 * (group-commit.ts): one transaction per company for the group, one log line per group. With the
 * sink on this thread nothing is ever in flight when the next chunk comes, so each chunk is its own.
 */
import type { Tracer } from '@opentelemetry/api';
import type { Change } from '@pda/projections/model';
import type { BatchResult, DeadLetter } from '@pda/projections/write';
import type { Logger } from 'pino';
import type { ApplySink } from '../apply-thread/sink.ts';
import type { Decoder, RawRecord } from '../decode/index.ts';
import { type BatchTrace, startBatchTrace } from '../observability/batch-trace.ts';
import type { IngestMetrics } from '../observability/metrics.ts';
import { createGroupCommitter } from './group-commit.ts';

export interface BatchSummary {
  readonly events: number;
  readonly applied: number;
  readonly skipped: number;
  readonly deadLettered: number;
  readonly ignored: number;
  readonly companies: number;
  readonly filesOpened: number;
  readonly filesEvicted: number;
  readonly durationMs: number;
}

/** A decoded batch, ready to apply. */
export interface Prepared {
  readonly events: number;
  readonly changes: readonly Change[];
  readonly deadLetters: readonly DeadLetter[];
  readonly ignored: number;
  readonly lastTsMs: number | undefined;
  /** performance.now() when decoding started (the records had just been fetched) and ended. */
  readonly started: number;
  readonly decodedAt: number;
  /** The oldest record's Kafka timestamp (epoch ms), when the client gives one (traces). */
  readonly inKafkaAtMs: number | undefined;
}

/** An apply call's outcome for each chunk in it: its summary, and its trace when one was sampled. */
export interface Applied {
  readonly summary: BatchSummary;
  /** Ended by the caller once the offsets are committed (kafka/hand-over.ts). */
  readonly trace: BatchTrace | undefined;
}

export interface Pipeline {
  prepare(records: readonly RawRecord[], invalid?: readonly DeadLetter[]): Prepared;
  /** Applies (grouped with the chunks that wait meanwhile); resolves when every transaction committed. */
  apply(prepared: Prepared): Promise<Applied>;
  /**
   * Prepares and applies one batch on its own; `invalid`: records rejected before decoding
   * (unreadable replay lines), stored as dead letters.
   */
  process(records: readonly RawRecord[], invalid?: readonly DeadLetter[]): Promise<BatchSummary>;
  /**
   * Records that every change up to source time `tsMs` is applied (a heartbeat confirmed while
   * caught up): an apply call without changes, in order with the batches (one writer).
   */
  markSourceCurrent(tsMs: number): Promise<void>;
}

const textOf = (bytes: Uint8Array | string | null): string | null =>
  bytes === null ? null : typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');

export function createPipeline(deps: {
  decoder: Decoder;
  sink: ApplySink;
  metrics: IngestMetrics;
  logger: Logger;
  /** Upper bound of events merged into one apply call (default 20,000). */
  maxGroupEvents?: number | (() => number);
  /** Told how many companies each apply call touched (group-bound.ts). */
  onApplied?: (companies: number) => void;
  /**
   * A split writer (kafka/writer-ownership.ts foreignCompanyOf): the company of a tenant change this writer does
   * not apply, else undefined. Such changes are counted and left out, one warning per chunk.
   */
  foreignCompany?: (change: Change) => string | undefined;
  /** Spans of each apply call (observability/batch-trace.ts); omitted: none (traces off). */
  tracer?: Tracer;
}): Pipeline {
  const { decoder, sink, metrics, logger } = deps;
  const tracer = deps.tracer;
  // A reason is logged once per process (then only counted), so a poison stream cannot flood logs.
  const loggedReasons = new Set<string>();

  function prepare(records: readonly RawRecord[], invalid: readonly DeadLetter[] = []): Prepared {
    const started = performance.now();
    const changes: Change[] = [];
    const deadLetters: DeadLetter[] = [...invalid];
    let ignored = 0;
    let lastTsMs: number | undefined;
    let inKafkaAtMs: number | undefined;
    let foreign: { count: number; companies: Set<string>; first: RawRecord } | undefined;
    for (const record of records) {
      const result = decoder(record);
      const { topic, partition, offset } = record;
      if (
        record.timestampMs !== undefined &&
        !(record.timestampMs >= (inKafkaAtMs ?? Number.POSITIVE_INFINITY))
      )
        inKafkaAtMs = record.timestampMs;
      if (result.type === 'change') {
        const company = deps.foreignCompany?.(result.change);
        if (company !== undefined) {
          // Defence in depth behind the assignment: never applied here, never a crash.
          foreign ??= { count: 0, companies: new Set(), first: record };
          foreign.count++;
          if (foreign.companies.size < 5) foreign.companies.add(company);
          ignored++;
          metrics.notOwned.inc({ table: result.change.table });
          continue;
        }
        changes.push(result.change);
        lastTsMs = Math.max(lastTsMs ?? 0, result.change.position.tsMs);
      } else if (result.type === 'ignored') {
        ignored++;
        metrics.ignored.inc({ reason: result.reason });
      } else {
        const key = textOf(record.key);
        deadLetters.push({
          topic,
          partition,
          offset,
          key,
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
    if (foreign !== undefined) {
      const { topic, partition, offset } = foreign.first;
      logger.warn(
        { count: foreign.count, companies: [...foreign.companies], topic, partition, offset },
        "changes of companies this writer does not own were not applied (their partition is not this writer's in the ownership file: the connector and the file disagree?)",
      );
    }
    return {
      events: records.length + invalid.length,
      changes,
      deadLetters,
      ignored,
      lastTsMs,
      started,
      decodedAt: performance.now(),
      inKafkaAtMs,
    };
  }

  function finish(prepared: Prepared, result: BatchResult | undefined): BatchSummary {
    metrics.consumedMessages += prepared.events;
    for (const [table, counts] of Object.entries(result?.tables ?? {})) {
      if (counts.applied) metrics.events.inc({ table, outcome: 'applied' }, counts.applied);
      if (counts.skipped) metrics.events.inc({ table, outcome: 'skipped' }, counts.skipped);
      if (counts.rejected) metrics.events.inc({ table, outcome: 'dead_lettered' }, counts.rejected);
    }
    for (const dl of prepared.deadLetters) {
      metrics.events.inc({ table: dl.topic.split('.').at(-1) ?? 'unknown', outcome: 'dead_lettered' });
    }
    if (result) {
      reportCompanyFaults(result);
      deps.onApplied?.(result.companies);
      metrics.companyFilesOpened.inc(result.files.opened);
      metrics.companyFilesEvicted.inc(result.files.evicted);
      metrics.companyFilesClosedIdle.inc(result.files.closedIdle);
      metrics.openCompanyFiles.set(result.files.open);
      metrics.openCompanyFilesMax.set(result.files.max);
      metrics.statementsEvicted.inc(result.statements.evicted);
      metrics.statementsHeld.set(result.statements.held);
    }
    if (prepared.lastTsMs !== undefined && (result?.applied ?? 0) > 0)
      metrics.lastSourceTsMs = prepared.lastTsMs;
    const durationMs = performance.now() - prepared.started;
    metrics.batchDuration.observe(durationMs / 1000);
    const summary: BatchSummary = {
      events: prepared.events,
      applied: result?.applied ?? 0,
      skipped: result?.skipped ?? 0,
      deadLettered: result?.deadLettered ?? prepared.deadLetters.length,
      ignored: prepared.ignored,
      companies: result?.companies ?? 0,
      // Files (re)opened and evicted by this batch: non-zero while the batch is wider than the cache.
      filesOpened: result?.files.opened ?? 0,
      filesEvicted: result?.files.evicted ?? 0,
      durationMs: Math.round(durationMs * 10) / 10,
    };
    // A batch that changed nothing (heartbeats, transaction markers, tombstones) at debug: on a quiet
    // source Debezium's heartbeat alone made one info line every 10 s, 8,640 a day of nothing.
    if (summary.applied + summary.skipped + summary.deadLettered === 0)
      logger.debug(summary, 'batch applied');
    else logger.info(summary, 'batch applied');
    return summary;
  }

  const hasWork = (p: Prepared) => p.changes.length + p.deadLetters.length > 0;

  /**
   * A damaged company file found by this batch: ONE error line naming the company and what to do;
   * every company out of service is in the gauge and /readyz (the batch itself went on).
   */
  function reportCompanyFaults(result: BatchResult): void {
    for (const fault of result.faults?.detected ?? []) {
      logger.error(
        { companyId: fault.companyId, reason: fault.reason, movedTo: fault.movedTo },
        `company file damaged: company ${fault.companyId} is out of service (the api answers 503 for it, the other companies go on) until it is rebuilt: pnpm --filter @pda/ingest run rebuild --company ${fault.companyId}`,
      );
    }
    const outOfService = result.faults?.outOfService ?? [];
    metrics.companyFaults = outOfService;
    metrics.companiesOutOfService.set(
      { state: 'damaged' },
      outOfService.filter((f) => f.state === 'damaged').length,
    );
    metrics.companiesOutOfService.set(
      { state: 'rebuilding' },
      outOfService.filter((f) => f.state === 'rebuilding').length,
    );
  }

  /** One apply call for a batch (or a merged group); nothing to write: no call at all. */
  async function applyNow(prepared: Prepared): Promise<Applied> {
    if (!hasWork(prepared)) return { summary: finish(prepared, undefined), trace: undefined };
    // Without a tracer (traces off, the default) nothing of batch-trace.ts runs.
    const batchTrace = tracer && startBatchTrace(tracer, prepared);
    const sentAt = performance.now();
    let result: BatchResult;
    try {
      result = await sink.applyBatch(prepared.changes, {
        deadLetters: prepared.deadLetters,
        ...(batchTrace && { trace: batchTrace.link }),
      });
    } catch (error) {
      batchTrace?.failed(error);
      throw error;
    }
    batchTrace?.applied(result, sentAt, performance.now());
    return { summary: finish(prepared, result), trace: batchTrace };
  }

  const groups = createGroupCommitter<Prepared, Applied>({
    merge: mergePrepared,
    size: (p) => p.events,
    maxGroupSize: deps.maxGroupEvents ?? 20_000,
    // One group at a time: what decodes meanwhile queues up and goes as the next, larger group
    // (fewer, larger company transactions for the same throughput and less apply CPU; two groups
    // in flight were tried and not kept: bench/results/ingest-2026-11-22.md).
    maxInFlight: 1,
    commit: applyNow,
  });

  return {
    prepare,
    apply: (prepared) => groups.submit(prepared),
    process: async (records, invalid = []) => {
      // Nothing commits offsets after a replay's batch: its trace ends with the apply.
      const { summary, trace: batchTrace } = await applyNow(prepare(records, invalid));
      batchTrace?.committed(undefined);
      return summary;
    },
    async markSourceCurrent(tsMs) {
      const result = await sink.applyBatch([], { sourceCurrentAtMs: tsMs });
      // The open files' on-disk check runs in these calls too: an idle company's damage shows here.
      reportCompanyFaults(result);
      metrics.sourceCurrentAtMs = Math.max(metrics.sourceCurrentAtMs ?? 0, tsMs);
    },
  };
}

/** Chunks in submission order → one: the apply path sees them as one batch (per-row order kept). */
export function mergePrepared(items: readonly Prepared[]): Prepared {
  let lastTsMs: number | undefined;
  let inKafkaAtMs: number | undefined;
  for (const p of items) {
    if (p.lastTsMs !== undefined) lastTsMs = Math.max(lastTsMs ?? 0, p.lastTsMs);
    if (p.inKafkaAtMs !== undefined)
      inKafkaAtMs = Math.min(inKafkaAtMs ?? Number.POSITIVE_INFINITY, p.inKafkaAtMs);
  }
  return {
    events: items.reduce((sum, p) => sum + p.events, 0),
    changes: items.flatMap((p) => p.changes),
    deadLetters: items.flatMap((p) => p.deadLetters),
    ignored: items.reduce((sum, p) => sum + p.ignored, 0),
    lastTsMs,
    started: Math.min(...items.map((p) => p.started)),
    decodedAt: Math.max(...items.map((p) => p.decodedAt)),
    inKafkaAtMs,
  };
}
