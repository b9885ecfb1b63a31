import { existsSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { retryOutOfDescriptors } from '../../model/descriptors.ts';
import { CompanyFileDamagedError } from '../../model/errors.ts';
import { companyPath } from '../../model/paths.ts';
import type { StatementBound } from '../../model/statement-lru.ts';
import { type ClockUs, CompanyFile } from './company-file.ts';

/** What the writer's file cache did, counted since the store was opened. */
export interface FileCacheCounts {
  /** Files opened (a miss: the file was not open). */
  readonly opened: number;
  /** Files closed to make room (each close checkpoints the file). */
  readonly evicted: number;
  /** Files closed because no batch wrote to them for the idle time (their WAL and -shm go too). */
  readonly closedIdle: number;
  /** Files open now. */
  readonly open: number;
  /** The bound. */
  readonly max: number;
}

/**
 * A bounded LRU of open company writers. Each open WAL file costs three file descriptors and its
 * page cache; the bound comes from the process's descriptor limit (descriptors.ts). A batch
 * touching more companies than the bound reopens files, which is slow (opening parses the schema;
 * closing the last connection checkpoints the file: bench/README.md, "What one company file
 * costs"): batches visit the open files first (`isOpen`), so only the companies beyond the bound
 * are reopened. Whatever leaves the cache (evicted, cleared) is closed.
 */
export interface IdleClose {
  /** Close files no batch wrote to for this long (0: never). */
  readonly afterMs: number;
  readonly nowMs: () => number;
}

/** What the writer knows about which files must exist and which are out of service (company-faults.ts). */
export interface FileGuard {
  isDamaged(companyId: string): boolean;
  expectsFile(companyId: string): boolean;
}

const NO_GUARD: FileGuard = { isDamaged: () => false, expectsFile: () => false };

export class CompanyFiles {
  readonly #open: LRUCache<string, CompanyFile>;
  readonly #dataDir: string;
  readonly #max: number;
  readonly #clock: ClockUs;
  readonly #idle: IdleClose;
  /** When each open file was last handed out (ms, `idle.nowMs`). */
  readonly #usedAt = new Map<string, number>();
  #opened = 0;
  #evicted = 0;
  #closedIdle = 0;
  #guard: FileGuard = NO_GUARD;
  /** Round-robin position of checkOnDisk over the open files. */
  #checkedAt = 0;
  /** Damage the check before a close found (evicted, idle): reported by the next checkOnDisk. */
  readonly #damagedAtClose = new Map<string, string>();
  /** The company being dropped (already known damaged: its close is not reported again). */
  #dropping: string | undefined;
  /** Each open file's statement bound, and the counts they share (undefined: the default bound). */
  readonly #statements: StatementBound | undefined;

  constructor(
    dataDir: string,
    max: number,
    clock: ClockUs,
    idle: IdleClose = { afterMs: 0, nowMs: Date.now },
    statements?: StatementBound,
  ) {
    this.#dataDir = dataDir;
    this.#statements = statements;
    this.#max = Math.max(1, max);
    this.#clock = clock;
    this.#idle = idle;
    // The cache never evicts by itself: get() makes room first (#evictOne), so the bound holds.
    this.#open = new LRUCache<string, CompanyFile>({
      max: this.#max,
      dispose: (file, companyId) => {
        this.#usedAt.delete(companyId);
        const damage = file.close();
        if (damage !== undefined && companyId !== this.#dropping) this.#damagedAtClose.set(companyId, damage);
      },
    });
  }

  /** Set once by the store: which companies are out of service, which files must exist. */
  guard(guard: FileGuard): void {
    this.#guard = guard;
  }

  /**
   * Opens (creating and migrating if needed) the company's file; it becomes the most recent.
   * Throws CompanyFileDamagedError for a company out of service, and for one whose file the writer
   * wrote before and that is gone (never silently created again empty).
   */
  get(companyId: string): CompanyFile {
    if (this.#guard.isDamaged(companyId)) {
      throw new CompanyFileDamagedError(companyId, 'out of service until it is rebuilt');
    }
    if (this.#idle.afterMs > 0) this.#usedAt.set(companyId, this.#idle.nowMs());
    const open = this.#open.get(companyId);
    if (open) return open;
    // Close the oldest before opening: the bound is on open files, never exceeded even briefly.
    if (this.#open.size >= this.#max) this.#evictOne();
    const file = this.#openFile(companyId);
    this.#opened++;
    this.#open.set(companyId, file);
    return file;
  }

  /** Whether the company's file is open now (does not change its recency). */
  isOpen(companyId: string): boolean {
    return this.#open.has(companyId);
  }

  /** Files open now (at most the bound). */
  get size(): number {
    return this.#open.size;
  }

  counts(): FileCacheCounts {
    return {
      opened: this.#opened,
      evicted: this.#evicted,
      closedIdle: this.#closedIdle,
      open: this.#open.size,
      max: this.#max,
    };
  }

  /**
   * Closes the files no batch wrote to for the idle time: a tenant that changes rarely then costs
   * no descriptor, no memory and no WAL on disk between its changes (closing checkpoints the file
   * and removes its -wal and -shm), at the price of one open when it changes again.
   */
  closeIdle(): number {
    if (this.#idle.afterMs <= 0) return 0;
    const before = this.#idle.nowMs() - this.#idle.afterMs;
    const idle: string[] = [];
    // Least recently used first: the first file used since `before` ends the idle ones.
    for (const companyId of this.#open.rkeys()) {
      if ((this.#usedAt.get(companyId) ?? 0) > before) break;
      idle.push(companyId);
    }
    for (const companyId of idle) this.#open.delete(companyId);
    this.#closedIdle += idle.length;
    return idle.length;
  }

  /**
   * Out of file descriptors (a limit lower than the bound assumed, or descriptors held elsewhere in
   * the process): give back half of the open files and retry once.
   */
  #openFile(companyId: string): CompanyFile {
    if (this.#guard.expectsFile(companyId) && !existsSync(companyPath(this.#dataDir, companyId))) {
      throw new CompanyFileDamagedError(companyId, 'missing: the file was deleted while closed');
    }
    return retryOutOfDescriptors(
      () => new CompanyFile(this.#dataDir, companyId, this.#clock, this.#statements),
      () => {
        if (this.#open.size === 0) return false;
        for (let n = Math.ceil(this.#open.size / 2); n > 0; n--) this.#evictOne();
        return true;
      },
    );
  }

  #evictOne(): void {
    if (this.#open.pop() !== undefined) this.#evicted++;
  }

  /** Closes the company's file if open (a damaged file leaves the cache before it is moved aside). */
  drop(companyId: string): void {
    this.#usedAt.delete(companyId);
    this.#damagedAtClose.delete(companyId);
    this.#dropping = companyId;
    try {
      this.#open.delete(companyId);
    } finally {
      this.#dropping = undefined;
    }
  }

  /**
   * Looks at up to `max` open files on disk (CompanyFile.checkOnDisk), round robin over calls;
   * returns the damaged ones with what was found, first those found damaged when they were closed.
   */
  checkOnDisk(max: number): { companyId: string; reason: string }[] {
    const found = [...this.#damagedAtClose].map(([companyId, reason]) => ({ companyId, reason }));
    this.#damagedAtClose.clear();
    const open = [...this.#open.keys()];
    const count = Math.min(max, open.length);
    for (let i = 0; i < count; i++) {
      const companyId = open[(this.#checkedAt + i) % open.length] as string;
      const reason = this.#open.peek(companyId)?.checkOnDisk();
      if (reason !== undefined && !found.some((f) => f.companyId === companyId))
        found.push({ companyId, reason });
    }
    this.#checkedAt = open.length === 0 ? 0 : (this.#checkedAt + count) % open.length;
    return found;
  }

  closeAll(): void {
    this.#open.clear();
  }
}
