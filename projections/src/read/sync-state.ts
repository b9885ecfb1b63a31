import type { ReadHandle } from './read-handle.ts';

/**
 * What a sync token is checked against and what a new one records (docs/public-data-api-v1.md,
 * "Sync tokens"): the file's generation, its highest change time and its tombstone horizon, read
 * in one statement, so in the snapshot of the page read with it.
 */
export interface SyncState {
  /** meta.created_us: names the file's generation (a rebuilt file is a new one). 0 = not set. */
  readonly generation: number;
  /** meta.last_changed_us: the highest change time handed out in this file (0 = none yet). */
  readonly lastChangedUs: number;
  /** meta.tombstones_since_us: deletes at or after this change time all have their tombstone. */
  readonly tombstonesSinceUs: number;
}

export function readSyncState(handle: ReadHandle): SyncState {
  const row = handle
    .statement(
      'meta:sync-state',
      () => 'SELECT created_us, last_changed_us, tombstones_since_us FROM meta WHERE lock = 1',
      { raw: true },
    )
    .get() as [number, number, number] | undefined;
  if (!row) return { generation: 0, lastChangedUs: 0, tombstonesSinceUs: 0 };
  return { generation: row[0], lastChangedUs: row[1], tombstonesSinceUs: row[2] };
}
