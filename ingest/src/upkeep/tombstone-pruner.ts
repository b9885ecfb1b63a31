/**
 * Tombstone retention (ingest/README.md, "Tombstone retention"): every interval, one prune pass
 * deletes the tombstones projected longer ago than the retention window, through the one writer
 * (the apply thread, or the store on this thread), in bounded steps between which batches go on
 * being applied. ONE log line per pass, never one per row or per file.
 *
 * The api reads each file's horizon (meta.tombstones_since_us), so a partner asking for deletions
 * older than what is kept gets 410 sync_window_expired, never an incomplete list.
 */
import type { PruneCursor, PruneOptions, PruneStep } from '@pda/projections/write';
import type { Logger } from 'pino';
import { type PeriodicPasses, periodicPasses } from './periodic-passes.ts';

/** A step deletes at most this many tombstones (one short transaction per file). */
const STEP_MAX_ROWS = 1_000;
/** A step looks at most at this many company files (most have nothing to prune: a read each). */
const STEP_MAX_FILES = 100;

export interface PassSummary {
  readonly cutoff: string;
  readonly pruned: number;
  readonly filesVisited: number;
  readonly filesPruned: number;
  readonly steps: number;
  readonly durationMs: number;
}

export type TombstonePruner = PeriodicPasses<PassSummary>;

export function startTombstonePruner(deps: {
  /** The writer's prune step: ProjectionStore.pruneTombstones, or the apply thread's. */
  readonly step: (options: PruneOptions, cursor?: PruneCursor) => Promise<PruneStep>;
  readonly retentionMs: number;
  /** 0 = no timer (passes only through runPass). */
  readonly intervalMs: number;
  readonly logger: Logger;
}): TombstonePruner {
  const options: PruneOptions = {
    retentionUs: deps.retentionMs * 1000,
    maxRows: STEP_MAX_ROWS,
    maxFiles: STEP_MAX_FILES,
  };

  async function pass(stopping: () => boolean): Promise<PassSummary> {
    const started = performance.now();
    let cursor: PruneCursor | undefined;
    let cutoffUs = 0;
    let pruned = 0;
    let filesVisited = 0;
    let filesPruned = 0;
    let steps = 0;
    do {
      const step = await deps.step(options, cursor);
      steps++;
      cutoffUs = step.cutoffUs;
      pruned += step.pruned;
      filesVisited += step.filesVisited;
      filesPruned += step.filesPruned;
      cursor = step.next ?? undefined;
      // Let queued batches and I/O in between steps (the synchronous store runs on this thread).
      if (cursor) await new Promise((resolve) => setImmediate(resolve));
    } while (cursor && !stopping());
    const summary: PassSummary = {
      cutoff: new Date(cutoffUs / 1000).toISOString(),
      pruned,
      filesVisited,
      filesPruned,
      steps,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    };
    deps.logger.info({ ...summary, complete: !cursor }, 'tombstones pruned');
    return summary;
  }

  // The tombstones stay until the next interval's pass when one fails (kept longer is allowed).
  return periodicPasses(pass, {
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    failedMessage: 'tombstone prune pass failed',
  });
}
