import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { CompanyFileDamagedError } from '../../model/errors.ts';
import type { ProjectionDb } from '../../model/open.ts';
import { companyPath } from '../../model/paths.ts';
import type { StatementBound } from '../../model/statement-lru.ts';
import type { TraceLink } from '../../model/trace-link.ts';
import { openCompanyWriter } from './open-writers.ts';
import { StatementCache } from './statement-cache.ts';
import { tombstoneLsn, writeCompanyTombstone } from './tombstones.ts';

/** Microseconds since the epoch. Injected so tests can drive the change time. */
export type ClockUs = () => number;

/**
 * Wall-clock microseconds: partners compare filter[updated_since] with their own clock, so the
 * change time follows the wall clock (ms resolution; the +1 rule keeps it strictly increasing).
 */
export const wallClockUs: ClockUs = () => Date.now() * 1000;

/**
 * WAL frames between checkpoints (SQLite's default bound). The writer runs its checkpoints itself,
 * each after a look at the file on disk (checkOnDisk), instead of SQLite's automatic ones: a
 * checkpoint copies the WAL's pages into the main file, and an automatic one that ran just after
 * the file was overwritten in place wrote a valid header back over the garbage, so the on-disk
 * check never saw the damage while the pages not in the WAL stayed garbage (a fault-campaign run,
 * test/faults/damaged-company-file.e2e.test.ts).
 */
const CHECKPOINT_FRAMES = 1_000;
/** Rows of apply_traces kept per file (the newest): enough for the feed pages of the last minutes. */
const APPLY_TRACES_KEPT = 1_000;
/** A WAL file's header, before its frames (each a page and a 24-byte frame header). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;

/**
 * One open company file on the writer side: its statements, its change-time counter and its
 * TRUNCATE floors. Ingest is the only writer, so the in-memory copies of meta.last_changed_us and
 * the floors stay exact; after a rolled-back transaction they are reloaded from the file.
 */
export class CompanyFile {
  readonly companyId: string;
  readonly statements: StatementCache;
  readonly floors = new Map<string, number>();
  /**
   * Tables that may have tombstones in this file. Most files have none for most tables, and then
   * an upsert needs no tombstone lookup. Added to when a tombstone is written (never removed until
   * reload(), which reads the exact set: a stale entry only costs a lookup).
   */
  readonly tombstoneTables = new Set<string>();
  readonly #clock: ClockUs;
  readonly #path: string;
  /** The file's identity when opened: a different inode under the same name is not our file. */
  readonly #ino: number;
  /** Bytes per WAL frame: the file's page size and a frame header. */
  readonly #walFrameBytes: number;
  /** WAL frames already copied into the main file by this writer's last checkpoint. */
  #checkpointedFrames = 0;
  #lastChangedUs = 0;
  /** meta.created_us: no change time is handed out below it (a sync token's watermark may be just under it). */
  #createdUs = 0;

  constructor(dataDir: string, companyId: string, clock: ClockUs, statements?: StatementBound) {
    this.companyId = companyId;
    this.statements = new StatementCache(
      openCompanyWriter(dataDir, companyId),
      statements?.max,
      statements?.counts,
    );
    this.#path = companyPath(dataDir, companyId);
    this.#ino = statSync(this.#path).ino;
    // No automatic checkpoint (checkpointIfDue), and the WAL cut back to nothing when it restarts,
    // so that its size counts the frames written since: one stat tells when a checkpoint is due.
    this.db.exec('PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 0;');
    this.#walFrameBytes = (this.db.pragma('page_size', { simple: true }) as number) + WAL_FRAME_HEADER_BYTES;
    this.#clock = clock;
    this.reload();
    this.#startFile();
  }

  get db(): ProjectionDb {
    return this.statements.db;
  }

  /**
   * A change time strictly greater than every earlier one in this file
   * (docs/architecture.md#change-time-and-updated_since).
   */
  nextChangeTime(): number {
    // Never below the file's creation, even when the clock stepped back since: a sync token issued
    // on the empty file stands just below it (api/src/sync/).
    const now = Math.max(this.#clock(), this.#createdUs);
    this.#lastChangedUs = now > this.#lastChangedUs ? now : this.#lastChangedUs + 1;
    return this.#lastChangedUs;
  }

  /** The newest change time handed out (the counter nextChangeTime moves). */
  get lastChangedUs(): number {
    return this.#lastChangedUs;
  }

  /**
   * Notes that the change times after `beforeUs` up to the counter were written by the traced batch
   * `trace` (migration 007), keeping the newest APPLY_TRACES_KEPT rows; inside the transaction.
   */
  recordTrace(trace: TraceLink, beforeUs: number): void {
    if (this.#lastChangedUs <= beforeUs) return;
    this.statements
      .get(
        'apply-traces:insert',
        () =>
          'INSERT OR REPLACE INTO apply_traces (last_changed_us, first_changed_us, trace_id, span_id) VALUES (?, ?, ?, ?)',
      )
      .run(this.#lastChangedUs, beforeUs + 1, trace.traceId, trace.spanId);
    this.statements
      .get(
        'apply-traces:trim',
        () =>
          `DELETE FROM apply_traces WHERE last_changed_us < (SELECT last_changed_us FROM apply_traces ORDER BY last_changed_us DESC LIMIT 1 OFFSET ${APPLY_TRACES_KEPT - 1})`,
      )
      .run();
  }

  /** Persists the counter; called inside the file's transaction, after its last write. */
  saveChangeTime(): void {
    this.statements
      .get('meta:save', () => 'UPDATE meta SET last_changed_us = ? WHERE lock = 1')
      .run(this.#lastChangedUs);
  }

  reload(): void {
    this.#lastChangedUs = this.db
      .prepare('SELECT last_changed_us FROM meta WHERE lock = 1')
      .pluck()
      .get() as number;
    this.tombstoneTables.clear();
    for (const table of this.db.prepare('SELECT DISTINCT table_name FROM tombstones').pluck().all()) {
      this.tombstoneTables.add(table as string);
    }
    this.floors.clear();
    for (const row of this.db.prepare('SELECT table_name, _src_lsn FROM truncations').all() as {
      table_name: string;
      _src_lsn: number;
    }[]) {
      this.floors.set(row.table_name, row._src_lsn);
    }
  }

  /**
   * A new file vouches for the deletes projected into it from now on (meta.tombstones_since_us,
   * migration 004): nothing before its creation is here, which is what a rebuilt generation
   * must say (its files never held the older tombstones). The same time names the file's
   * generation (meta.created_us, migration 005), which sync tokens are bound to.
   */
  #startFile(): void {
    const meta = this.db.prepare('SELECT tombstones_since_us, created_us FROM meta WHERE lock = 1').get() as {
      tombstones_since_us: number;
      created_us: number;
    };
    if (meta.tombstones_since_us === 0) {
      const now = Math.max(1, this.#clock());
      this.db.prepare('UPDATE meta SET tombstones_since_us = ?, created_us = ? WHERE lock = 1').run(now, now);
      this.#createdUs = now;
    } else {
      this.#createdUs = meta.created_us;
    }
  }

  /** The row's tombstone position, without a lookup when the table has none in this file. */
  tombstoneLsn(table: string, id: string): number | undefined {
    return this.tombstoneTables.has(table) ? tombstoneLsn(this.statements, table, id) : undefined;
  }

  writeTombstone(table: string, id: string, lsn: number, changedUs: number): void {
    writeCompanyTombstone(this.statements, table, id, lsn, changedUs);
    this.tombstoneTables.add(table);
  }

  /**
   * What is wrong with the file on disk under this open handle, or undefined: gone (deleted or
   * renamed), replaced by another file, or no SQLite header any more (overwritten). One stat and a
   * 16-byte read: cheap enough to run over the open files every few seconds. Deeper corruption shows
   * as SQLITE_CORRUPT when a page is read.
   */
  checkOnDisk(): string | undefined {
    let ino: number;
    try {
      ino = statSync(this.#path).ino;
    } catch {
      return 'missing: the file was deleted or moved while open';
    }
    if (ino !== this.#ino) return 'replaced: another file was put in its place while open';
    const header = Buffer.alloc(16);
    try {
      const fd = openSync(this.#path, 'r');
      try {
        readSync(fd, header, 0, 16, 0);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      // Out of descriptors or an I/O error is not this file's fault (the storage path handles it).
      return (error as { code?: unknown }).code === 'ENOENT'
        ? 'missing: the file was deleted or moved while open'
        : undefined;
    }
    return header.toString('latin1') === 'SQLite format 3\u0000'
      ? undefined
      : 'corrupt: the file no longer starts with the SQLite header';
  }

  /**
   * Before a transaction: once the WAL holds CHECKPOINT_FRAMES frames not yet in the main file,
   * checks the file on disk, then checkpoints (PASSIVE, as SQLite's automatic one: readers'
   * snapshots are never waited for). Throws CompanyFileDamagedError instead of writing into a file
   * that is no longer ours.
   */
  checkpointIfDue(): void {
    const frames = this.#walFrames();
    // Smaller than at the last checkpoint: the WAL restarted (and was cut back) since.
    if (frames < this.#checkpointedFrames) this.#checkpointedFrames = 0;
    if (frames - this.#checkpointedFrames < CHECKPOINT_FRAMES) return;
    const damage = this.checkOnDisk();
    if (damage !== undefined) throw new CompanyFileDamagedError(this.companyId, damage);
    const [result] = this.db.pragma('wal_checkpoint(PASSIVE)') as { checkpointed: number }[];
    this.#checkpointedFrames = Math.max(0, result?.checkpointed ?? frames);
  }

  #walFrames(): number {
    const size = statSync(`${this.#path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    return Math.max(0, Math.floor((size - WAL_HEADER_BYTES) / this.#walFrameBytes));
  }

  /**
   * Closes the handle (the last connection's close checkpoints the WAL into the main file). Returns
   * what the on-disk check found just before, if anything: that checkpoint cannot be held back, so
   * the caller reports the damage instead (CompanyFiles).
   */
  close(): string | undefined {
    const damage = this.checkOnDisk();
    this.statements.clear();
    try {
      this.db.close();
    } catch {
      // A damaged file can fail its closing checkpoint; the handle is gone either way.
    }
    return damage;
  }
}
