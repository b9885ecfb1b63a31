/**
 * Debezium's heartbeats → "the source is current" (ingest/README.md, "Freshness and heartbeats"). A
 * heartbeat's time T is confirmed once every data partition is applied up to the high watermark it
 * had just after the heartbeat arrived: every change Debezium sent before T is then in the files.
 * Under load too: the watermarks are taken once, then each applied chunk checks them (no need for
 * a moment with nothing in flight), so the confirmation follows the heartbeat by one admin round
 * trip plus what was already fetched, not by seconds.
 *
 * The watermarks are read CONFIRM_DELAY_MS after the heartbeat arrived: Connect's producer may
 * still be sending a record it was handed before the heartbeat to another partition (on one broker
 * its in-order connection makes that impossible; across brokers it is a matter of milliseconds).
 */
import type { Logger } from 'pino';
import { heartbeatTsMs, type RawRecord } from '../decode/index.ts';
import type { InFlightChunks } from './in-flight.ts';
import type { LagMonitor } from './lag-monitor.ts';

/** The part of the source's options (source.ts KafkaSourceOptions) the watch reads. */
export interface HeartbeatOptions {
  readonly heartbeatTopic?: string;
  readonly onSourceCurrent?: (tsMs: number) => Promise<void>;
  readonly readHeartbeat?: (value: Uint8Array | null) => number | undefined;
  readonly logger: Logger;
}

export const CONFIRM_DELAY_MS = 100;

/**
 * Debezium's heartbeats: the newest one seen, the one waiting for its watermarks to be applied,
 * and the newest reported to `onSourceCurrent`.
 */
export function createHeartbeatWatch(options: HeartbeatOptions, lag: LagMonitor, inFlight: InFlightChunks) {
  const readHeartbeat = options.readHeartbeat ?? heartbeatTsMs;
  let lastHeartbeat: { tsMs: number; receivedAtMs: number } | undefined;
  let reportedTsMs = 0;
  /** A heartbeat whose watermarks are known, waiting for them to be applied. */
  let pending: { tsMs: number; marks: ReadonlyMap<string, number> } | undefined;
  let reading = false;
  let readAgain = false;

  function report(tsMs: number): void {
    if (!options.onSourceCurrent || tsMs <= reportedTsMs) return;
    reportedTsMs = tsMs;
    options.onSourceCurrent(tsMs).catch((err: unknown) => {
      // Not lost: the next heartbeat reports a later time.
      reportedTsMs = 0;
      options.logger.warn({ err: String(err) }, 'recording the source position of a heartbeat failed');
    });
  }

  /** Reports the pending heartbeat once its watermarks are applied. */
  function check(): void {
    if (pending && lag.reached(pending.marks)) {
      const { tsMs } = pending;
      pending = undefined;
      report(tsMs);
    }
  }

  /** Reads the watermarks for the newest heartbeat (one read at a time; a newer one reads again). */
  function readMarks(): void {
    if (!options.onSourceCurrent) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    const heartbeat = lastHeartbeat;
    setTimeout(() => {
      lag
        .highWatermarks()
        .then((marks) => {
          if (heartbeat && heartbeat.tsMs > reportedTsMs && heartbeat.tsMs > (pending?.tsMs ?? 0))
            pending = { tsMs: heartbeat.tsMs, marks };
          check();
        })
        .catch((err: unknown) => options.logger.warn({ err: String(err) }, 'heartbeat watermark read failed'))
        .finally(() => {
          reading = false;
          if (readAgain) {
            readAgain = false;
            readMarks();
          }
        });
    }, CONFIRM_DELAY_MS).unref();
  }

  /** After a lag poll that started at `pollStartedAtMs`: caught up entirely, the heartbeat holds. */
  function confirm(pollStartedAtMs: number): void {
    const seen = lastHeartbeat;
    if (!seen || seen.tsMs <= reportedTsMs || seen.receivedAtMs > pollStartedAtMs) return;
    const snapshot = lag.snapshot();
    if (!snapshot.measured || snapshot.total > 0 || inFlight.events() > 0) return;
    report(seen.tsMs);
  }

  return {
    isHeartbeatTopic: (topic: string) => topic === options.heartbeatTopic,
    /** Heartbeat records arrived (they still go through the pipeline, ignored, so offsets commit). */
    seen(records: readonly RawRecord[]): void {
      let newer = false;
      for (const record of records) {
        const value = record.value;
        const tsMs = readHeartbeat(typeof value === 'string' ? Buffer.from(value) : value);
        if (tsMs !== undefined && tsMs > (lastHeartbeat?.tsMs ?? 0)) {
          lastHeartbeat = { tsMs, receivedAtMs: Date.now() };
          newer = true;
        }
      }
      if (newer) readMarks();
    },
    /** A chunk was applied: the pending heartbeat may now hold. */
    applied: check,
    async pollLag(): Promise<void> {
      const startedAt = Date.now();
      await lag.poll();
      confirm(startedAt);
    },
  };
}
export type HeartbeatWatch = ReturnType<typeof createHeartbeatWatch>;
