import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { openReader } from '@pda/projections/model';

/**
 * A consistent copy of one projection file, taken while ingest writes it: SQLite's `VACUUM INTO`
 * from a read-only connection. It reads the file in one read transaction (the copy is the file as
 * of one commit, whole batches only) and writes a compact new file in rollback-journal mode, with
 * the same schema, rows, indexes and schema version (PRAGMA user_version). In WAL mode the read
 * never blocks the writer; the WAL only cannot be recycled past the copy's snapshot until it ends.
 */

export interface CopyResult {
  readonly bytes: number;
  readonly seconds: number;
}

export function copyProjectionFile(
  source: string,
  out: string,
  options: { readonly force?: boolean } = {},
): CopyResult {
  if (existsSync(out) && !options.force)
    throw new Error(`${out} exists (remove it, or pass --force to replace it)`);
  const started = performance.now();
  const partial = `${out}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  const db = openReader(source);
  try {
    // The connection is opened read-only (SQLITE_OPEN_READONLY: no write can reach the source);
    // query_only, the reader's second lock, would also refuse VACUUM INTO's write to its new file.
    db.pragma('query_only = OFF');
    db.prepare('VACUUM INTO ?').run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  if (options.force) rmSync(out, { force: true });
  renameSync(partial, out);
  return { bytes: statSync(out).size, seconds: (performance.now() - started) / 1000 };
}
