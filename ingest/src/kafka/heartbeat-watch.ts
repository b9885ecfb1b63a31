/**
 * Debezium's heartbeats → "the source is current": a heartbeat's time is reported once a lag poll
 * that started after it arrived finds every data partition applied to its end (source.ts polls).
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

/**
 * Debezium's heartbeats: the newest one seen, and the newest reported to `onSourceCurrent` once a
 * lag poll that started after it arrived found everything applied.
 */
export function createHeartbeatWatch(options: HeartbeatOptions, lag: LagMonitor, inFlight: InFlightChunks) {
  const readHeartbeat = options.readHeartbeat ?? heartbeatTsMs;
  let lastHeartbeat: { tsMs: number; receivedAtMs: number } | undefined;
  let reportedTsMs = 0;

  /** After a lag poll that started at `pollStartedAtMs`: report the heartbeat if caught up. */
  function confirm(pollStartedAtMs: number): void {
    const seen = lastHeartbeat;
    if (!seen || !options.onSourceCurrent || seen.tsMs <= reportedTsMs || seen.receivedAtMs > pollStartedAtMs)
      return;
    const snapshot = lag.snapshot();
    if (!snapshot.measured || snapshot.total > 0 || inFlight.events() > 0) return;
    reportedTsMs = seen.tsMs;
    options.onSourceCurrent(seen.tsMs).catch((err: unknown) => {
      // Not lost: the next heartbeat reports a later time.
      reportedTsMs = 0;
      options.logger.warn({ err: String(err) }, 'recording the source position of a heartbeat failed');
    });
  }

  return {
    isHeartbeatTopic: (topic: string) => topic === options.heartbeatTopic,
    /** Heartbeat records arrived (they still go through the pipeline, ignored, so offsets commit). */
    seen(records: readonly RawRecord[]): void {
      for (const record of records) {
        const value = record.value;
        const tsMs = readHeartbeat(typeof value === 'string' ? Buffer.from(value) : value);
        if (tsMs !== undefined && tsMs > (lastHeartbeat?.tsMs ?? 0))
          lastHeartbeat = { tsMs, receivedAtMs: Date.now() };
      }
    },
    async pollLag(): Promise<void> {
      const startedAt = Date.now();
      await lag.poll();
      confirm(startedAt);
    },
  };
}
export type HeartbeatWatch = ReturnType<typeof createHeartbeatWatch>;
