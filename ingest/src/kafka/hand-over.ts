import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { RawRecord } from '../decode/index.ts';
import type { BatchControl, FetchedBatch } from './client.ts';
import type { FailurePause } from './failure-pause.ts';
import type { HeartbeatWatch } from './heartbeat-watch.ts';
import type { InFlightChunks } from './in-flight.ts';
import type { LagMonitor } from './lag-monitor.ts';
import type { CommitRound, OffsetCommitter } from './offset-committer.ts';

/**
 * Two phases so consecutive chunks overlap on two cores: `prepare` (decode, this thread) of the
 * next chunks runs while `commit` (apply in the apply thread) of earlier ones is in flight. `commit`
 * resolves only after every SQLite transaction of its chunk committed; only then may its offsets be
 * committed to Kafka.
 */
export interface RecordsHandler<T> {
  /**
   * Before `prepare`, may wait (heartbeating) until the records can be decoded: the writer schemas
   * of Avro records are fetched here (schema-registry/resolver.ts). Returns early when `signal`
   * aborts; the chunk is then not handed over.
   */
  resolve?(
    records: readonly RawRecord[],
    hooks: { heartbeat: () => Promise<void>; signal: AbortSignal },
  ): Promise<void>;
  prepare(records: RawRecord[]): T;
  /** May return what to tell once the chunk's offsets are committed (its batch's trace ends there). */
  commit(prepared: T): Promise<AfterOffsetCommit | undefined>;
}

export interface AfterOffsetCommit {
  committed(round: CommitRound | undefined): void;
}

/** The part of the source's options (source.ts KafkaSourceOptions) the hand-over reads. */
export interface HandOverOptions {
  readonly maxBatchEvents: number;
  readonly maxEventsInFlight: number | (() => number);
}

/**
 * The batch callback: a fetched batch → chunks of at most maxBatchEvents, each resolved, prepared
 * and handed to `commit` without waiting for it. Before each chunk the fetcher (and so the broker)
 * waits while too much is being applied (backpressure).
 */
export function handOverBatches<T>(parts: {
  options: HandOverOptions;
  handler: RecordsHandler<T>;
  signal: AbortSignal;
  inFlight: InFlightChunks;
  heartbeats: HeartbeatWatch;
  commits: OffsetCommitter;
  failures: FailurePause;
  lag: LagMonitor;
}) {
  const { options, handler, signal, inFlight, heartbeats, commits, failures, lag } = parts;
  const bound = options.maxEventsInFlight;
  const maxEventsInFlight = typeof bound === 'function' ? bound : () => bound;

  return async (batch: FetchedBatch, control: BatchControl): Promise<void> => {
    const { topic, partition, records: all, highWatermark } = batch;
    const { heartbeat } = control;
    for (let i = 0; i < all.length; i += options.maxBatchEvents) {
      for (let limit = maxEventsInFlight(); inFlight.events() >= limit && !signal.aborted; ) {
        await Promise.race([inFlight.below(limit), sleep(1000)]);
        await heartbeat();
        limit = maxEventsInFlight();
      }
      const records = all.slice(i, i + options.maxBatchEvents);
      await handler.resolve?.(records, { heartbeat, signal });
      if (!control.owned() || signal.aborted) return;
      if (heartbeats.isHeartbeatTopic(topic)) heartbeats.seen(records);
      const first = (records[0] as RawRecord).offset;
      const last = (records[records.length - 1] as RawRecord).offset;
      const ticket = inFlight.add(topic, partition, first, last, records.length);
      if (!ticket) return; // blocked by a failed chunk until the seek takes effect
      const prepared = handler.prepare(records);
      handler.commit(prepared).then(
        (after) => {
          inFlight.applied(ticket);
          lag.applied(topic, partition, last, highWatermark);
          heartbeats.applied();
          failures.succeeded();
          if (after) commits.whenCommitted(topic, partition, last, (round) => after.committed(round));
          commits.commitApplied();
        },
        (error: unknown) => failures.failed(ticket, error),
      );
      control.handedOver(last);
      // Let the apply thread's answers (a macrotask) in between chunks, so the next group is
      // sent while this partition keeps decoding.
      await yieldToEventLoop();
    }
  };
}
