/**
 * The spans of one apply call (docs/operations.md, "Traces"): a root span `ingest.batch` from the
 * moment its first records were fetched to the moment their offsets were committed to Kafka, with
 * one child per stage — `ingest.fetch` (the oldest record's time in Kafka → fetched: how long it
 * waited there), `ingest.decode`, `ingest.plan`, `ingest.apply` (the company transactions and the
 * control one), `ingest.durable_flush` and `ingest.offset_commit`. Each stage is timed where it
 * runs and its span made afterwards with those times, so a stage pays for no span it does not
 * need and the apply thread none at all.
 *
 * The batch span carries, per change, its source commit time, LSN, company and Kafka position (as
 * arrays, the first MAX_LISTED changes; `pda.changes.listed` says how many), and its ids go into
 * every company file the batch writes (ApplyOptions.trace), where the api's feed span finds them.
 * Not sampled: no span is made, nothing is written, and the cost is one sampler call per batch.
 */
import {
  type Attributes,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Change, TraceLink } from '@pda/projections/model';
import type { BatchResult } from '@pda/projections/write';
import type { CommitRound } from '../kafka/offset-committer.ts';

/** Changes listed per batch span: a 20,000-event group would otherwise make a span of megabytes. */
export const MAX_LISTED = 256;

/** Epoch milliseconds with sub-millisecond precision, the time base of every span here. */
export const epochMs = (performanceNow = performance.now()): number =>
  performance.timeOrigin + performanceNow;

/** What the decode side knows of one group (batch/pipeline.ts Prepared; performance.now() times). */
export interface TracedGroup {
  readonly changes: readonly Change[];
  readonly events: number;
  /** Decoding started (the records had just been fetched) and ended. */
  readonly started: number;
  readonly decodedAt: number;
  /** When the oldest record of the group was written to Kafka (its record timestamp, epoch ms). */
  readonly inKafkaAtMs: number | undefined;
}

export interface BatchTrace {
  /** The batch span's ids, written with its changes into each company file. */
  readonly link: TraceLink;
  /** The apply call was sent at `sentAt` and answered at `answeredAt` (performance.now()). */
  applied(result: BatchResult, sentAt: number, answeredAt: number): void;
  /** Ends the batch span: its offsets are committed (or no round is known: it ends now). */
  committed(round: CommitRound | undefined): void;
  failed(error: unknown): void;
}

/** The batch's trace when the sampler keeps it, else undefined (no span made at all). */
export function startBatchTrace(tracer: Tracer, group: TracedGroup): BatchTrace | undefined {
  const fetchedAtMs = epochMs(group.started);
  const batch = tracer.startSpan(
    'ingest.batch',
    {
      kind: SpanKind.CONSUMER,
      startTime: fetchedAtMs,
      attributes: changeAttributes(group.changes, group.events),
    },
    ROOT_CONTEXT,
  );
  if (!batch.isRecording()) return undefined;
  const parent = trace.setSpan(ROOT_CONTEXT, batch);
  const child = (name: string, start: number, end: number, attributes?: Attributes) =>
    tracer.startSpan(name, { startTime: start, ...(attributes && { attributes }) }, parent).end(end);
  if (group.inKafkaAtMs !== undefined && group.inKafkaAtMs <= fetchedAtMs)
    child('ingest.fetch', group.inKafkaAtMs, fetchedAtMs);
  child('ingest.decode', fetchedAtMs, epochMs(group.decodedAt));
  let ended = false;
  const end = (span: Span, at?: number) => {
    if (ended) return;
    ended = true;
    span.end(at);
  };
  const { traceId, spanId } = batch.spanContext();
  return {
    link: { traceId, spanId },
    applied(result, sentAt, answeredAt) {
      // The apply thread measured its own parts; laid end to end from when the call was sent.
      const applyStartedMs = epochMs(sentAt);
      const appliedMs = epochMs(answeredAt);
      const planEnd = applyStartedMs + result.timings.planMs;
      child('ingest.plan', applyStartedMs, planEnd);
      child('ingest.apply', planEnd, Math.max(planEnd, appliedMs), {
        'pda.companies': result.companies,
        'pda.applied': result.applied,
        'pda.skipped': result.skipped,
        'pda.dead_lettered': result.deadLettered,
        'pda.companies_ms': result.timings.companiesMs,
        'pda.control_ms': result.timings.controlMs,
      });
    },
    committed(round) {
      if (ended) return;
      if (round) {
        child('ingest.durable_flush', round.durableStartMs, round.durableEndMs);
        child('ingest.offset_commit', round.durableEndMs, round.committedAtMs);
      }
      end(batch, round?.committedAtMs);
    },
    failed(error) {
      batch.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
      end(batch);
    },
  };
}

/** The batch's size and, per listed change, where it comes from. */
function changeAttributes(changes: readonly Change[], events: number): Attributes {
  const listed = changes.slice(0, MAX_LISTED);
  const sourceTs = listed.map((c) => c.position.tsMs);
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  for (const change of changes) {
    if (change.position.tsMs < minTs) minTs = change.position.tsMs;
    if (change.position.tsMs > maxTs) maxTs = change.position.tsMs;
  }
  return {
    'pda.events': events,
    'pda.changes': changes.length,
    'pda.changes.listed': listed.length,
    ...(changes.length > 0 && { 'pda.source.commit_ms.min': minTs, 'pda.source.commit_ms.max': maxTs }),
    'pda.change.table': listed.map((c) => c.table),
    'pda.change.company': listed.map(companyOf),
    'pda.change.lsn': listed.map((c) => c.position.lsn),
    'pda.change.source_commit_ms': sourceTs,
    'pda.change.kafka': listed.map((c) =>
      c.origin ? `${c.origin.topic}/${c.origin.partition}/${c.origin.offset}` : '',
    ),
  };
}

/** The tenant a change belongs to ('' for control rows and deletes, whose row is not in the event). */
function companyOf(change: Change): string {
  if (change.kind !== 'upsert') return '';
  const company = change.row.company_id;
  return typeof company === 'string'
    ? company
    : change.table === 'companies'
      ? String(change.key.id ?? '')
      : '';
}
