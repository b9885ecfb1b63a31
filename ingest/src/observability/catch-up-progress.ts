/**
 * How fast a catch-up goes and when it will be done, from periodic samples of (time, messages
 * consumed so far, total consumer lag). Pure: the caller feeds it (observability/catch-up-reporter.ts) and
 * decides what to log and export.
 *
 * - events/s over a sliding window, so a start-up pause (joining the group, the first fetch) stops
 *   weighing on the rate once it is older than the window;
 * - ETA = lag ÷ that rate: it assumes the current rate and nothing new arriving. It is 0 at lag 0,
 *   and null when the rate is 0 or unknown, the lag is not measured, or the lag did not shrink over
 *   the window (the source writes as fast as ingest applies: no honest finite ETA);
 * - "catching up" = a measured lag above `maxLag` (INGEST_READY_MAX_LAG: the lag readiness accepts).
 *   A sample without a measured lag (a new consumer before its first lag poll) changes nothing.
 */

export interface CatchUpSample {
  readonly nowMs: number;
  /** Messages consumed (applied, skipped, dead-lettered or ignored) since the process started. */
  readonly consumed: number;
  /** Total consumer lag in messages; undefined until measured. */
  readonly lag: number | undefined;
}

/** A catch-up from its start (the last sample before the lag was found above `maxLag`). */
export interface CatchUpSpan {
  readonly startedAtMs: number;
  readonly seconds: number;
  /** Messages consumed since the start. */
  readonly events: number;
  /** events ÷ seconds; null for a span of no time. */
  readonly meanEventsPerSecond: number | null;
  /** The catch-up found by the first measured lag: an initial load, a restart, a rebuild. */
  readonly atStart: boolean;
}

export interface CatchUpReading {
  /** Messages per second over the window; null before a second sample. */
  readonly eventsPerSecond: number | null;
  readonly lag: number | null;
  readonly etaSeconds: number | null;
  readonly catchingUp: boolean;
  /** While catching up: the catch-up so far. */
  readonly current?: CatchUpSpan;
  /** On the sample where the lag came back to `maxLag` or below: the whole catch-up. */
  readonly ended?: CatchUpSpan;
}

export interface CatchUpProgressOptions {
  readonly windowMs: number;
  readonly maxLag: number;
}

interface Episode {
  readonly startedAtMs: number;
  readonly consumed: number;
  readonly atStart: boolean;
}

export class CatchUpProgress {
  private readonly options: CatchUpProgressOptions;
  /** Samples of the last `windowMs`, oldest first: the oldest is the rate's base. */
  private samples: CatchUpSample[] = [];
  /** The first sample (the process start: the caller samples once before anything is consumed). */
  private first: CatchUpSample | undefined;
  private measuredBefore = false;
  private episode: Episode | undefined;

  constructor(options: CatchUpProgressOptions) {
    this.options = options;
  }

  observe(sample: CatchUpSample): CatchUpReading {
    const previous = this.samples.at(-1);
    this.first ??= sample;
    this.samples.push(sample);
    this.samples = this.samples.filter((s) => s.nowMs >= sample.nowMs - this.options.windowMs);
    const oldest = this.samples[0] ?? sample;
    const elapsedMs = sample.nowMs - oldest.nowMs;
    const eventsPerSecond = elapsedMs > 0 ? ((sample.consumed - oldest.consumed) * 1000) / elapsedMs : null;
    const lag = sample.lag ?? null;
    const shrinking = oldest.lag === undefined || (lag !== null && lag < oldest.lag);
    const etaSeconds =
      lag === 0 ? 0 : lag !== null && eventsPerSecond && shrinking ? lag / eventsPerSecond : null;

    let ended: CatchUpSpan | undefined;
    if (lag !== null) {
      this.episode ??= this.episodeFound(lag, sample, previous);
      if (this.episode && lag <= this.options.maxLag) {
        ended = spanOf(this.episode, sample);
        this.episode = undefined;
      }
      this.measuredBefore = true;
    }
    const current = this.episode && spanOf(this.episode, sample);
    return {
      eventsPerSecond,
      lag,
      etaSeconds,
      catchingUp: this.episode !== undefined,
      ...(current && { current }),
      ...(ended && { ended }),
    };
  }

  /**
   * A catch-up starts at the last sample before the lag was found above `maxLag`. At the first
   * measured lag, what was consumed since the first sample was pending then too: a start-up load
   * that was over before the first lag poll (a small topic) is still found, and it ends at once.
   */
  private episodeFound(
    lag: number,
    sample: CatchUpSample,
    previous: CatchUpSample | undefined,
  ): Episode | undefined {
    const first = this.first ?? sample;
    const lagAtStart = this.measuredBefore ? lag : lag + sample.consumed - first.consumed;
    if (lagAtStart <= this.options.maxLag) return undefined;
    const base = this.measuredBefore ? (previous ?? sample) : first;
    return { startedAtMs: base.nowMs, consumed: base.consumed, atStart: !this.measuredBefore };
  }
}

function spanOf(episode: Episode, sample: CatchUpSample): CatchUpSpan {
  const seconds = (sample.nowMs - episode.startedAtMs) / 1000;
  const events = sample.consumed - episode.consumed;
  return {
    startedAtMs: episode.startedAtMs,
    seconds,
    events,
    meanEventsPerSecond: seconds > 0 ? events / seconds : null,
    atStart: episode.atStart,
  };
}
