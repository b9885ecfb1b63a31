/**
 * What the apply path needs from the projections write side: @pda/projections' ProjectionStore
 * satisfies it. Keeping the seam this small lets the pipeline be shared by the Kafka worker, the
 * replay command and the benchmark.
 */
import type { ApplyOptions, BatchResult, Change } from '@pda/projections';

export interface ApplySink {
  /** Applies and commits synchronously: when it returns, every SQLite transaction has committed. */
  applyBatch(changes: readonly Change[], options?: ApplyOptions): BatchResult;
  close(): void;
}
