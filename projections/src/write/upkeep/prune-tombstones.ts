import { openReader } from '../../model/open.ts';
import { companyPath, listCompanyFiles } from '../../model/paths.ts';
import type { CompanyFile } from '../files/company-file.ts';
import type { CompanyFiles } from '../files/company-files.ts';

/**
 * Tombstone retention (projections/README.md, "Tombstones and the deletions feed"): tombstones
 * whose change time is older than the window are deleted by the single writer, oldest first, in
 * small transactions, and each file's meta.tombstones_since_us moves up to say from when on its
 * tombstones are complete again (the api answers an older filter[deleted_since] with 410).
 *
 * A pass is a sequence of bounded steps, so the writer can apply batches between them: each step
 * looks at a few files and deletes a bounded number of rows, then returns where to continue.
 */

export interface PruneOptions {
  /** Tombstones projected more than this long ago (µs) are deleted. */
  readonly retentionUs: number;
  /** Upper bound of tombstones one step deletes (each file's share is one transaction). */
  readonly maxRows: number;
  /** Upper bound of company files one step looks at. */
  readonly maxFiles: number;
}

/** Where a pass continues: its cutoff (fixed for the pass) and the next company file, in id order. */
export interface PruneCursor {
  readonly cutoffUs: number;
  readonly from: string;
}

export interface PruneStep {
  /** Change time below which this pass deletes tombstones. */
  readonly cutoffUs: number;
  readonly pruned: number;
  /** Files looked at, and files in which tombstones were deleted. */
  readonly filesVisited: number;
  readonly filesPruned: number;
  /** null: the pass is over. */
  readonly next: PruneCursor | null;
}

export function pruneStep(
  dataDir: string,
  files: CompanyFiles,
  options: PruneOptions,
  cursor: PruneCursor | undefined,
  nowUs: number,
): PruneStep {
  const cutoffUs = cursor?.cutoffUs ?? nowUs - options.retentionUs;
  const companies = listCompanyFiles(dataDir).sort();
  let index = cursor ? companies.findIndex((id) => id >= cursor.from) : 0;
  if (index < 0) index = companies.length;
  let pruned = 0;
  let filesVisited = 0;
  let filesPruned = 0;
  while (index < companies.length && filesVisited < options.maxFiles && pruned < options.maxRows) {
    const companyId = companies[index] as string;
    filesVisited++;
    if (!hasTombstonesBefore(dataDir, companyId, cutoffUs)) {
      index++;
      continue;
    }
    const result = pruneFile(files.get(companyId), cutoffUs, options.maxRows - pruned);
    pruned += result.pruned;
    if (result.pruned > 0) filesPruned++;
    if (result.done) index++;
  }
  const next = companies[index];
  return {
    cutoffUs,
    pruned,
    filesVisited,
    filesPruned,
    next: next === undefined ? null : { cutoffUs, from: next },
  };
}

/**
 * A read-only look first: most files have nothing to prune, and opening them through the writer's
 * LRU would push out the files ingest is writing (and fsync each one it closes).
 */
function hasTombstonesBefore(dataDir: string, companyId: string, cutoffUs: number): boolean {
  let db: ReturnType<typeof openReader>;
  try {
    db = openReader(companyPath(dataDir, companyId));
  } catch {
    return false; // gone since it was listed (nothing to prune), or not a readable file
  }
  try {
    return db.prepare('SELECT 1 FROM tombstones WHERE _changed_us < ? LIMIT 1').get(cutoffUs) !== undefined;
  } finally {
    db.close();
  }
}

/**
 * Deletes up to about `maxRows` of the file's oldest tombstones below the cutoff in one
 * transaction (ties on the last change time go too) and moves meta.tombstones_since_us past them.
 */
export function pruneFile(
  file: CompanyFile,
  cutoffUs: number,
  maxRows: number,
): { readonly pruned: number; readonly done: boolean } {
  return file.db.transaction(() => {
    const batch = file.statements
      .get(
        'prune:batch',
        () =>
          `SELECT count(*), max(_changed_us) FROM
             (SELECT _changed_us FROM tombstones WHERE _changed_us < ? ORDER BY _changed_us LIMIT ?)`,
      )
      .raw()
      .get(cutoffUs, Math.max(1, maxRows)) as [number, number | null];
    const [count, last] = batch;
    if (count === 0 || last === null) return { pruned: 0, done: true };
    const { changes } = file.statements
      .get('prune:delete', () => 'DELETE FROM tombstones WHERE _changed_us <= ?')
      .run(last);
    const done =
      file.statements
        .get('prune:left', () => 'SELECT 1 FROM tombstones WHERE _changed_us < ? LIMIT 1')
        .get(cutoffUs) === undefined;
    // All of them: the file vouches again from the cutoff on; a part: from just after the last one.
    const upTo = done ? cutoffUs : last + 1;
    file.statements
      .get(
        'prune:horizon',
        () => 'UPDATE meta SET tombstones_since_us = max(tombstones_since_us, ?) WHERE lock = 1',
      )
      .run(upTo);
    return { pruned: changes, done };
  })();
}
