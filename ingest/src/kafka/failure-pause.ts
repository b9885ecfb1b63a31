import type { Logger } from 'pino';
import type { GroupConsumer } from './client.ts';
import type { InFlightChunks, Ticket } from './in-flight.ts';

/** The part of the source's options (source.ts KafkaSourceOptions) the pause reads. */
export interface FailureOptions {
  /** Told of every failed apply before the partition pauses (source.ts says what it returns). */
  readonly onApplyFailure?: (error: unknown) => { logged: boolean; retryMs?: number };
  readonly logger: Logger;
}

/**
 * Apply failed (disk full, I/O, apply thread died): the partition's uncommitted chunks are dropped,
 * it pauses and is read again from the first of them after a backoff.
 */
export function createFailurePause(
  consumer: GroupConsumer,
  inFlight: InFlightChunks,
  options: FailureOptions,
) {
  const { logger } = options;
  /**
   * Resumes pending after a failure. Cleared at disconnect: resume() on a stopped consumer throws,
   * and in a timer that would be an uncaught exception (stop or a generation swap mid-failure).
   */
  const resumeTimers = new Set<NodeJS.Timeout>();
  const backoff = {
    attempt: 0,
    next() {
      this.attempt++;
      return Math.min(30_000, 500 * 2 ** (this.attempt - 1));
    },
    reset() {
      this.attempt = 0;
    },
  };

  function failed(ticket: Ticket, error: unknown): void {
    const from = inFlight.failed(ticket);
    if (from === undefined) return; // an earlier chunk of this partition already failed
    const { topic, partition } = ticket;
    const reported = options.onApplyFailure?.(error);
    if (!reported?.logged)
      logger.error({ err: error, topic, partition, from }, 'apply failed; partition paused');
    const where = [{ topic, partitions: [partition] }];
    try {
      consumer.pause(where);
      consumer.seek({ topic, partition, offset: from });
    } catch (seekError) {
      logger.warn({ err: String(seekError), topic, partition }, 'seek after apply failure failed');
    }
    const timer = setTimeout(() => {
      resumeTimers.delete(timer);
      try {
        consumer.resume(where);
      } catch (resumeError) {
        logger.warn({ err: String(resumeError), topic, partition }, 'resume after apply failure failed');
      }
    }, reported?.retryMs ?? backoff.next()).unref();
    resumeTimers.add(timer);
  }

  return {
    failed,
    /** A chunk applied: the next failure starts its backoff from the beginning. */
    succeeded: () => backoff.reset(),
    clear(): void {
      for (const timer of resumeTimers) clearTimeout(timer);
      resumeTimers.clear();
    },
  };
}
export type FailurePause = ReturnType<typeof createFailurePause>;
