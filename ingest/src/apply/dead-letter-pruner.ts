/**
 * Dead-letter retention (ingest/README.md, "Dead letters"): every interval, one pass deletes the
 * oldest dead letters beyond INGEST_DEAD_LETTER_MAX_ROWS and those recorded longer ago than
 * INGEST_DEAD_LETTER_RETENTION_S, through the one writer (the apply thread, or the store on this
 * thread), in bounded steps between which batches go on being applied, as tombstones are
 * (tombstone-pruner.ts). One log line per pass that deleted something, none for a pass with
 * nothing to do.
 */
import type { Logger } from 'pino';

/** A step deletes at most this many dead letters (one short control transaction). */
const STEP_MAX_ROWS = 1_000;

export interface DeadLetterPassSummary {
  readonly pruned: number;
  readonly steps: number;
  readonly durationMs: number;
}

export interface DeadLetterPruner {
  /** One whole pass now (tests; the timer calls it too). Resolves with what it did. */
  runPass(): Promise<DeadLetterPassSummary>;
  /** Stops the timer and waits for a running pass to end after its current step. */
  stop(): Promise<void>;
}

export function startDeadLetterPruner(deps: {
  /** The writer's step: ProjectionStore.pruneDeadLetters, or the apply thread's. */
  readonly step: (maxRows: number) => Promise<{ readonly pruned: number }>;
  /** 0 = no timer (passes only through runPass). */
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Upper bound of letters one step deletes (tests make it small). */
  readonly stepMaxRows?: number;
}): DeadLetterPruner {
  const stepMaxRows = Math.max(1, deps.stepMaxRows ?? STEP_MAX_ROWS);
  let stopping = false;
  let running: Promise<DeadLetterPassSummary> | undefined;

  async function pass(): Promise<DeadLetterPassSummary> {
    const started = performance.now();
    let pruned = 0;
    let steps = 0;
    let more: boolean;
    do {
      const step = await deps.step(stepMaxRows);
      steps++;
      pruned += step.pruned;
      more = step.pruned >= stepMaxRows;
      // Let queued batches and I/O in between steps (the synchronous store runs on this thread).
      if (more) await new Promise((resolve) => setImmediate(resolve));
    } while (more && !stopping);
    const summary = { pruned, steps, durationMs: Math.round((performance.now() - started) * 10) / 10 };
    if (pruned > 0) deps.logger.info({ ...summary, complete: !more }, 'dead letters pruned');
    return summary;
  }

  function runPass(): Promise<DeadLetterPassSummary> {
    if (!running) {
      running = pass().finally(() => {
        running = undefined;
      });
    }
    return running;
  }

  const timer =
    deps.intervalMs > 0
      ? setInterval(() => {
          if (running || stopping) return;
          runPass().catch((error: unknown) => {
            // The next interval tries again; the letters stay meanwhile.
            deps.logger.warn({ err: error }, 'dead-letter prune pass failed');
          });
        }, deps.intervalMs)
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
