/**
 * A ProjectionStore (the one writer of a data directory) that is opened lazily, CLOSED after a
 * storage fault (disk full, read-only, I/O error: @pda/projections classifyFault) and reopened by
 * the next call: every descriptor on the data directory is released meanwhile, so an operator can
 * fsck and remount it, and the retry opens the files again, on whatever is mounted there by then.
 * Used by the apply thread and, without it, by the worker itself (sink.ts inProcessSink).
 */
import { existsSync } from 'node:fs';
import { type Change, controlPath, storageFaultOf } from '@pda/projections/model';
import {
  type ApplyOptions,
  type BatchResult,
  type CompanyFault,
  ProjectionStore,
  type ProjectionStoreOptions,
  type PruneCursor,
  type PruneOptions,
  type PruneStep,
} from '@pda/projections/write';
import type { SynchronousWriter } from './sink.ts';

export class ReopeningStore implements SynchronousWriter {
  readonly #options: ProjectionStoreOptions;
  #store: ProjectionStore | undefined;
  #opened = false;

  constructor(options: ProjectionStoreOptions) {
    this.#options = options;
  }

  #run<T>(work: (store: ProjectionStore) => T): T {
    try {
      if (!this.#store) {
        // Reopening after a storage fault: the data directory may be unmounted right now (being
        // repaired). Creating a new control.sqlite there would write the projection into the
        // empty mount point, under the file system mounted back over it: wait for the real one.
        if (this.#opened && !existsSync(controlPath(this.#options.dataDir))) {
          throw Object.assign(
            new Error(
              `${controlPath(this.#options.dataDir)} is gone (data directory unmounted?): not creating a new one`,
            ),
            { code: 'SQLITE_CANTOPEN' },
          );
        }
        this.#store = ProjectionStore.open(this.#options);
        this.#opened = true;
      }
      return work(this.#store);
    } catch (error) {
      if (storageFaultOf(error) !== undefined) this.close();
      throw error;
    }
  }

  applyBatch(changes: readonly Change[], options?: ApplyOptions): BatchResult {
    return this.#run((store) => store.applyBatch(changes, options));
  }

  pruneTombstones(options: PruneOptions, cursor?: PruneCursor): PruneStep {
    return this.#run((store) => store.pruneTombstones(options, cursor));
  }

  pruneDeadLetters(maxRows: number): { readonly pruned: number } {
    return this.#run((store) => store.pruneDeadLetters(maxRows));
  }

  companyFaults(): CompanyFault[] {
    return this.#run((store) => store.companyFaults());
  }

  startCompanyRebuild(companyId: string): CompanyFault {
    return this.#run((store) => store.startCompanyRebuild(companyId));
  }

  finishCompanyRebuild(companyId: string): void {
    this.#run((store) => store.finishCompanyRebuild(companyId));
  }

  close(): void {
    const store = this.#store;
    this.#store = undefined;
    try {
      store?.close();
    } catch {
      // Closing checkpoints; on a full or read-only disk that fails, and the handles are gone anyway.
    }
  }
}
