import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { OutOfDescriptorsError, ProjectionNotFoundError, ProjectionUnreadableError } from './errors.ts';

/**
 * The only two ways a projection file is opened (better-sqlite3 docs/performance.md):
 * - one writer (ingest): WAL so readers never block it, synchronous=NORMAL (durable at checkpoints,
 *   never corrupt; a power cut can lose the last batches, which Kafka replays because ingest commits
 *   offsets only after flushing the file system: ingest/src/batch/durability.ts), a bounded WAL file;
 * - any number of readers (api): read-only, the file must exist, query_only as a second lock.
 */

export type ProjectionDb = Database.Database;

/** How long a connection waits on a lock before SQLITE_BUSY (checkpoints, a concurrent migration). */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * Pages between automatic checkpoints (SQLite's default, 1000 pages ≈ 4 MiB). The automatic one is
 * a PASSIVE checkpoint run by the commit that crosses the bound, so control.sqlite's writer and
 * one-off writers need no checkpoint call of their own (ingest's company writers turn it off and
 * run the same checkpoint after an on-disk check: write/files/company-file.ts, checkpointIfDue):
 * another PASSIVE one would do the same work more often, and only a blocking mode (RESTART/TRUNCATE)
 * could get past readers' snapshots, stalling ingest behind the api's reads.
 */
const WAL_AUTOCHECKPOINT_PAGES = 1_000;
/** After a checkpoint resets the WAL, truncate the file back to this size so it cannot stay huge. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

const WRITER_PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  `busy_timeout = ${BUSY_TIMEOUT_MS}`,
  // Rows arrive in source commit order per row, not per relation (a contact may precede its site).
  'foreign_keys = OFF',
  `wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`,
  `journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`,
  'temp_store = MEMORY',
]
  .map((pragma) => `PRAGMA ${pragma};`)
  .join(' ');

export function openWriter(path: string): ProjectionDb {
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // One exec for all of them: a writer is opened again each time its company comes back into the
  // cache (descriptors.ts), and one statement string costs less than seven pragma calls.
  db.exec(WRITER_PRAGMAS);
  return db;
}

/** Throws ProjectionNotFoundError when the file does not exist (instead of SQLITE_CANTOPEN). */
export function openReader(path: string): ProjectionDb {
  if (!existsSync(path)) throw new ProjectionNotFoundError(path);
  let db: ProjectionDb;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw readerOpenError(path, error);
  }
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('query_only = ON');
  return db;
}

/**
 * What a reader's failure to open or first read a file means, as a ProjectionError the api answers
 * with a 503: CANTOPEN for a file that is gone (a rebuild swap between the check and the open) is
 * "not found", for one still there "no descriptor left"; an I/O error, not-a-database or corruption
 * is "unreadable". Anything else is returned as it is.
 */
export function readerOpenError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_CANTOPEN') {
    return existsSync(path) ? new OutOfDescriptorsError(path) : new ProjectionNotFoundError(path);
  }
  if (typeof code === 'string' && /^SQLITE_(IOERR|CORRUPT|NOTADB)/.test(code)) {
    return new ProjectionUnreadableError(path, error);
  }
  return error;
}
