/**
 * Tells operators how a catch-up goes (an initial load, a restart after an outage, a rebuild): fed
 * every second with the consumer lag, it sets pda_ingest_catchup_events_per_second and
 * pda_ingest_catchup_eta_seconds, and while catching up logs ONE info line per interval,
 * { eventsPerSecond, lag, etaSeconds, events, seconds } 'catching up', then one 'caught up' line
 * with the total time and the mean rate. The arithmetic is catch-up-progress.ts.
 */
import type { Logger } from 'pino';
import type { LagSnapshot } from '../kafka/lag-monitor.ts';
import { CatchUpProgress, type CatchUpReading, type CatchUpSpan } from './catch-up-progress.ts';
import type { IngestMetrics } from './metrics.ts';

/**
 * One 'catching up' line per 10 s: often enough to watch a rebuild of minutes or hours move, few
 * enough that a long initial load stays a few hundred lines (the batch lines say the rest).
 */
export const CATCH_UP_LOG_INTERVAL_MS = 10_000;

/**
 * The rate is measured over the last 30 s: long enough to smooth the lag polls (every 2 s) and
 * apply groups, short enough that the pause of joining the group and the first fetch no longer
 * counts half a minute in, and that a rate change shows in the ETA within a minute.
 */
export const CATCH_UP_RATE_WINDOW_MS = 30_000;

export interface CatchUpReporter {
  /** One sample: every second, and once more when the worker stops (the last 'caught up'). */
  observe(lag: LagSnapshot | undefined): void;
}

export function createCatchUpReporter(deps: {
  logger: Logger;
  metrics: IngestMetrics;
  /** INGEST_READY_MAX_LAG: above it the worker is catching up, at or below it is caught up. */
  maxLag: number;
  now?: () => number;
}): CatchUpReporter {
  const { logger, metrics, now = Date.now } = deps;
  const progress = new CatchUpProgress({ windowMs: CATCH_UP_RATE_WINDOW_MS, maxLag: deps.maxLag });
  // The first sample, before anything is consumed: a start-up load is measured from here.
  progress.observe({ nowMs: now(), consumed: metrics.consumedMessages, lag: undefined });
  /** When the current catch-up was last logged; undefined: not yet (or none is going on). */
  let loggedAtMs: number | undefined;

  return {
    observe(lag) {
      const nowMs = now();
      const reading = progress.observe({
        nowMs,
        consumed: metrics.consumedMessages,
        lag: lag?.measured ? lag.total : undefined,
      });
      metrics.catchUpEventsPerSecond.set(reading.eventsPerSecond ?? 0);
      metrics.catchUpEtaSeconds.set(etaGauge(reading));
      const current = reading.current;
      if (current && nowMs >= nextLineAtMs(current, loggedAtMs)) {
        logger.info(
          {
            eventsPerSecond: rounded(reading.eventsPerSecond),
            lag: reading.lag,
            etaSeconds: reading.etaSeconds === null ? null : Math.ceil(reading.etaSeconds),
            events: current.events,
            seconds: Math.round(current.seconds),
          },
          'catching up',
        );
        loggedAtMs = nowMs;
      }
      if (reading.ended) {
        // Only a catch-up that was logged, or the start-up one (a rebuild's, an initial load's).
        if (loggedAtMs !== undefined || reading.ended.atStart) {
          logger.info(
            {
              seconds: Math.round(reading.ended.seconds * 10) / 10,
              events: reading.ended.events,
              meanEventsPerSecond: rounded(reading.ended.meanEventsPerSecond),
              lag: reading.lag,
            },
            'caught up',
          );
        }
        loggedAtMs = undefined;
      }
    },
  };
}

/**
 * A short spike of a live worker's lag is not worth two lines (the gauges show it): a catch-up is
 * logged at once when it is found at start (an initial load, a restart, a rebuild), otherwise once
 * it has lasted an interval; then every interval.
 */
function nextLineAtMs(current: CatchUpSpan, loggedAtMs: number | undefined): number {
  if (loggedAtMs !== undefined) return loggedAtMs + CATCH_UP_LOG_INTERVAL_MS;
  return current.atStart ? current.startedAtMs : current.startedAtMs + CATCH_UP_LOG_INTERVAL_MS;
}

/** The ETA gauge: seconds left while catching up, 0 when caught up, -1 when unknown. */
function etaGauge(reading: CatchUpReading): number {
  if (reading.catchingUp) return reading.etaSeconds ?? -1;
  return reading.lag === null ? -1 : 0;
}

const rounded = (value: number | null) => (value === null ? null : Math.round(value));
