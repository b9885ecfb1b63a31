/**
 * What the apply path needs from the projections write side: ONE interface, asynchronous, whoever
 * does the writing. threaded-sink.ts runs a ProjectionStore in a worker thread, so decoding and
 * applying use both cores; `inProcessSink` runs one on the calling thread (INGEST_APPLY_THREAD=false,
 * replay, tests) and returns settled promises. Keeping the seam this small lets the pipeline be
 * shared by the Kafka worker, the replay command and the benchmark.
 */
import type { Change } from '@pda/projections/model';
import type {
  ApplyOptions,
  BatchResult,
  CompanyFault,
  ProjectionStore,
  PruneCursor,
  PruneOptions,
  PruneStep,
} from '@pda/projections/write';

export interface ApplySink {
  /** Resolves when every SQLite transaction of the batch has committed; rejects if none is known to. */
  applyBatch(changes: readonly Change[], options?: ApplyOptions): Promise<BatchResult>;
  /** One bounded step of a tombstone prune pass (upkeep/tombstone-pruner.ts), in order with the batches. */
  pruneTombstones(options: PruneOptions, cursor?: PruneCursor): Promise<PruneStep>;
  /** One bounded step of dead-letter retention (upkeep/dead-letter-pruner.ts), in order with the batches. */
  pruneDeadLetters(maxRows: number): Promise<{ readonly pruned: number }>;
  /**
   * Companies out of service; `start`/`finish` a per-company rebuild first, in order with the
   * batches (live-rebuild/company-rebuild.ts).
   */
  companies(action: 'list' | 'start' | 'finish', companyId?: string): Promise<CompanyFault[]>;
  close(): Promise<void>;
}

/** What a synchronous writer offers: ProjectionStore itself, or ReopeningStore around one. */
export type SynchronousWriter = Pick<
  ProjectionStore,
  | 'applyBatch'
  | 'pruneTombstones'
  | 'pruneDeadLetters'
  | 'companyFaults'
  | 'startCompanyRebuild'
  | 'finishCompanyRebuild'
  | 'close'
>;

/**
 * A synchronous writer on this thread as an ApplySink: each call runs to its end before it returns
 * (a throw becomes the rejection), so the next call always finds the previous one committed.
 */
export function inProcessSink(writer: SynchronousWriter): ApplySink {
  return {
    applyBatch: async (changes, options) => writer.applyBatch(changes, options),
    pruneTombstones: async (options, cursor) => writer.pruneTombstones(options, cursor),
    pruneDeadLetters: async (maxRows) => writer.pruneDeadLetters(maxRows),
    async companies(action, companyId) {
      if (action === 'start') writer.startCompanyRebuild(companyId as string);
      if (action === 'finish') writer.finishCompanyRebuild(companyId as string);
      return writer.companyFaults();
    },
    close: async () => writer.close(),
  };
}
