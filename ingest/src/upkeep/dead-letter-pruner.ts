/**
 * Dead-letter retention (ingest/README.md, "Dead letters"): every interval, one pass deletes the
 * oldest dead letters beyond INGEST_DEAD_LETTER_MAX_ROWS and those recorded longer ago than
 * INGEST_DEAD_LETTER_RETENTION_S, through the one writer (the apply thread, or the store on this
 * thread), in bounded steps between which batches go on being applied, as tombstones are
 * (tombstone-pruner.ts). One log line per pass that deleted something, none for a pass with
 * nothing to do.
 */
import type { Logger } from 'pino';
import { type PeriodicPasses, periodicPasses } from './periodic-passes.ts';

/** A step deletes at most this many dead letters (one short control transaction). */
const STEP_MAX_ROWS = 1_000;

export interface DeadLetterPassSummary {
  readonly pruned: number;
  readonly steps: number;
  readonly durationMs: number;
}

export type DeadLetterPruner = PeriodicPasses<DeadLetterPassSummary>;

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

  async function pass(stopping: () => boolean): Promise<DeadLetterPassSummary> {
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
    } while (more && !stopping());
    const summary = { pruned, steps, durationMs: Math.round((performance.now() - started) * 10) / 10 };
    if (pruned > 0) deps.logger.info({ ...summary, complete: !more }, 'dead letters pruned');
    return summary;
  }

  // The letters stay until the next interval's pass when one fails.
  return periodicPasses(pass, {
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    failedMessage: 'dead-letter prune pass failed',
  });
}
