import type { Change } from '../model/change.ts';
import type { BatchResult } from '../write/apply/result.ts';
import { ProjectionStore, type ProjectionStoreOptions } from '../write/store.ts';

/** Opens a store on `dataDir`, applies `changes` as one batch, closes it: test fixtures in one call. */
export function buildProjection(
  dataDir: string,
  changes: readonly Change[],
  options: Omit<ProjectionStoreOptions, 'dataDir'> = {},
): BatchResult {
  const store = ProjectionStore.open({ ...options, dataDir });
  try {
    return store.applyBatch(changes);
  } finally {
    store.close();
  }
}
