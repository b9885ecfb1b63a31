/**
 * The scheduling the retention pruners share (tombstone-pruner.ts, dead-letter-pruner.ts): one pass
 * at a time (asked for while one runs, that one is the answer), a timer every `intervalMs` that
 * skips its tick while a pass runs and logs a failed pass as one warning (the next tick tries
 * again), and a stop that ends the timer and waits for the running pass to end after its current
 * step (a pass reads `stopping()` between its steps).
 */
import type { Logger } from 'pino';

export interface PeriodicPasses<Summary> {
  /** One whole pass now (tests; the timer calls it too). Resolves with what it did. */
  runPass(): Promise<Summary>;
  /** Stops the timer and waits for a running pass to end after its current step. */
  stop(): Promise<void>;
}

export function periodicPasses<Summary>(
  pass: (stopping: () => boolean) => Promise<Summary>,
  options: {
    /** 0 = no timer (passes only through runPass). */
    readonly intervalMs: number;
    readonly logger: Logger;
    /** The warning logged when a timer's pass fails. */
    readonly failedMessage: string;
  },
): PeriodicPasses<Summary> {
  let stopping = false;
  let running: Promise<Summary> | undefined;

  function runPass(): Promise<Summary> {
    if (!running) {
      running = pass(() => stopping).finally(() => {
        running = undefined;
      });
    }
    return running;
  }

  const timer =
    options.intervalMs > 0
      ? setInterval(() => {
          if (running || stopping) return;
          runPass().catch((error: unknown) => {
            options.logger.warn({ err: error }, options.failedMessage);
          });
        }, options.intervalMs)
      : undefined;
  timer?.unref();

  return {
    runPass,
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
