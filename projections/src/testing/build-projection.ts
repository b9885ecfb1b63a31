import type { BatchResult } from '../apply/result.ts';
import { ProjectionStore, type ProjectionStoreOptions } from '../apply/store.ts';
import type { Change } from '../change.ts';

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
