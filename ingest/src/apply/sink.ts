/**
 * What the apply path needs from the projections write side. @pda/projections' ProjectionStore is
 * the synchronous sink; threaded-sink.ts runs one in a worker thread (the async sink), so decoding
 * and applying use both cores. Keeping the seam this small lets the pipeline be shared by the
 * Kafka worker, the replay command and the benchmark.
 */
import type {
  ApplyOptions,
  BatchResult,
  Change,
  CompanyFault,
  PruneCursor,
  PruneOptions,
  PruneStep,
} from '@pda/projections';

export interface ApplySink {
  /** Applies and commits synchronously: when it returns, every SQLite transaction has committed. */
  applyBatch(changes: readonly Change[], options?: ApplyOptions): BatchResult;
  /** One bounded step of a tombstone prune pass (tombstone-pruner.ts), by the same writer. */
  pruneTombstones(options: PruneOptions, cursor?: PruneCursor): PruneStep;
  /** One bounded step of dead-letter retention (dead-letter-pruner.ts), by the same writer. */
  pruneDeadLetters(maxRows: number): { readonly pruned: number };
  close(): void;
}

export interface AsyncApplySink {
  /** Resolves when every SQLite transaction of the batch has committed; rejects if none is known to. */
  applyBatch(changes: readonly Change[], options?: ApplyOptions): Promise<BatchResult>;
  /** One prune step, queued in order with the batches (the apply thread is the one writer). */
  pruneTombstones(options: PruneOptions, cursor?: PruneCursor): Promise<PruneStep>;
  /** One dead-letter prune step, queued in order with the batches. */
  pruneDeadLetters(maxRows: number): Promise<{ readonly pruned: number }>;
  /**
   * Companies out of service; `start`/`finish` a per-company rebuild first, in order with the
   * batches (company-rebuild.ts).
   */
  companies(action: 'list' | 'start' | 'finish', companyId?: string): Promise<CompanyFault[]>;
  close(): Promise<void>;
}

/** The synchronous writer behind the async interface (no apply thread: INGEST_APPLY_THREAD=false). */
export function asyncSinkOf(
  sink: ApplySink & {
    companyFaults(): CompanyFault[];
    startCompanyRebuild(companyId: string): unknown;
    finishCompanyRebuild(companyId: string): void;
  },
): AsyncApplySink {
  return {
    applyBatch: async (changes, options) => sink.applyBatch(changes, options),
    pruneTombstones: async (options, cursor) => sink.pruneTombstones(options, cursor),
    pruneDeadLetters: async (maxRows) => sink.pruneDeadLetters(maxRows),
    async companies(action, companyId) {
      if (action === 'start') sink.startCompanyRebuild(companyId as string);
      if (action === 'finish') sink.finishCompanyRebuild(companyId as string);
      return sink.companyFaults();
    },
    close: async () => sink.close(),
  };
}
