import { accessSync, constants, readFileSync, realpathSync, statfsSync } from 'node:fs';

/**
 * What a failure of the writer (or a reader) says about the storage under the projections, so
 * ingest can tell "the disk is full / read-only / failing: pause everything and retry" from "this
 * one company file is damaged: take that company out of service and go on with the others"
 * (docs/operations.md, "Storage faults").
 *
 * - `full`: SQLITE_FULL, ENOSPC, EDQUOT. Nothing is written; SQLite rolled the transaction back.
 * - `read_only`: SQLITE_READONLY (but not READONLY_DBMOVED, below), EROFS, EPERM/EACCES from the
 *   file system.
 * - `io`: SQLITE_IOERR*, SQLITE_CANTOPEN (a file that cannot be created: the directory is gone or
 *   read-only), EIO. A read-only remount after a file-system error shows as IOERR_WRITE:
 *   `probeStorage` tells the two apart on the directory itself.
 * - `damaged`: the FILE is bad, not the storage — SQLITE_CORRUPT*, SQLITE_NOTADB, and
 *   SQLITE_READONLY_DBMOVED (SQLite's answer to a write into a file that was deleted or renamed
 *   while open).
 * Anything else (a bug, a constraint) is not a storage fault: undefined.
 */
export type StorageFaultKind = 'full' | 'read_only' | 'io';
export type FaultKind = StorageFaultKind | 'damaged';

const SQLITE_DAMAGED = /^SQLITE_(CORRUPT|NOTADB|READONLY_DBMOVED)/;
const ERRNO: Readonly<Record<string, StorageFaultKind>> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EROFS: 'read_only',
  EPERM: 'read_only',
  EACCES: 'read_only',
  EIO: 'io',
};

/** The fault an error (SqliteError, a Node system error, or either as a `cause`) stands for. */
export function classifyFault(error: unknown): FaultKind | undefined {
  for (let e = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (SQLITE_DAMAGED.test(code) || code === 'company_file_damaged') return 'damaged';
      if (code.startsWith('SQLITE_FULL')) return 'full';
      if (code.startsWith('SQLITE_READONLY')) return 'read_only';
      if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'io';
      const errno = ERRNO[code];
      if (errno) return errno;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A storage fault (pause and retry everything), as opposed to a damaged file or anything else. */
export function storageFaultOf(error: unknown): StorageFaultKind | undefined {
  const kind = classifyFault(error);
  return kind === 'damaged' ? undefined : kind;
}

/**
 * Looks at the directory itself: a write probe answers EROFS on a read-only mount (for root too,
 * unlike permission bits), and no free block means full. Refines an `io` error (SQLite reports a
 * write refused by a read-only remount as IOERR_WRITE); returns `fallback` when the directory looks
 * writable and has room.
 */
export function probeStorage(dir: string, fallback: StorageFaultKind): StorageFaultKind {
  if (mountedReadOnly(dir)) return 'read_only';
  try {
    accessSync(dir, constants.W_OK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'read_only';
  }
  try {
    const fs = statfsSync(dir);
    if (fs.bavail === 0 || fs.bavail * fs.bsize < 64 * 1024) return 'full';
  } catch {
    // The directory is gone or unreadable: keep what SQLite said.
  }
  return fallback;
}

/**
 * Linux: whether the file system holding `dir` is mounted read-only, or was turned read-only by the
 * kernel after an error (ext4 errors=remount-ro shows `emergency_ro` while the mount still says
 * rw, and write probes pass until a write reaches the disk). False when it cannot tell.
 */
export function mountedReadOnly(dir: string, mounts?: string): boolean {
  let real: string;
  let table: string;
  try {
    real = realpathSync(dir);
    table = mounts ?? readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return false;
  }
  let best: { point: string; options: string[] } | undefined;
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    const point = (fields[1] ?? '').replace(/\\040/g, ' ');
    const within = point === '/' || real === point || real.startsWith(`${point}/`);
    if (!within || (best && best.point.length >= point.length)) continue;
    best = { point, options: (fields[3] ?? '').split(',') };
  }
  return best !== undefined && (best.options.includes('ro') || best.options.includes('emergency_ro'));
}
