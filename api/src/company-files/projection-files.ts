import { closeSync, openSync, readFileSync, readSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CompanyFileDamagedError,
  companyPath,
  controlPath,
  DEFAULT_STATEMENTS_PER_HANDLE,
  type ProjectionDb,
  retryOutOfDescriptors,
  StatementCounts,
} from '@pda/projections/model';
import {
  type CompanyFault,
  openCompanyReader,
  openControlReader,
  ReadHandle,
  type ReadHandleOptions,
  readCompanyFaults,
} from '@pda/projections/read';
import { LRUCache } from 'lru-cache';

/**
 * Read-only handles on the projection files: control.sqlite plus a bounded LRU of company files
 * (each handle carries its prepared statements). When ingest swaps in rebuilt files, every handle
 * is closed and reopened lazily on the new files.
 *
 * Swap signal (ingest "Rebuild", ingest/src/generations.ts): the identity of the data
 * directory = its resolved realpath (`<dir> -> <dir>.generations/<id>`, swapped by renaming a new
 * symlink over the old one), plus the inode of control.sqlite (files renamed into place) and the
 * generation's GENERATION.json. It is checked at most every
 * `reopenCheckMs`; requests keep reading the old files until then, which stay valid while open.
 * Handlers use a handle synchronously (better-sqlite3), so closing between requests is safe.
 *
 * The bound comes from the descriptor limit (three descriptors per open file, plugins/projections.ts).
 * Should an open still find no descriptor left (sockets took them), half of the open files are
 * closed and the open retried once; if that fails too the request gets a 503, never a crash.
 *
 * Damaged company files (ingest/README.md, "Damaged company files"): a company listed in
 * control.sqlite's company_faults (damaged, or being rebuilt) gets CompanyFileDamagedError (503) and
 * its handle is closed; an open handle whose file was deleted, replaced (another inode under the
 * name) or overwritten (no SQLite header) is closed and the file opened again. Both are checked at most every
 * `reopenCheckMs`, per company for the inode; a query that meets corruption closes the handle
 * (`forget`). So the api never serves a deleted file's rows nor a rebuild's incomplete file, and
 * serves the rebuilt one from its next check.
 */

/** What the cache did since the process started (the api's metrics). */
export interface CompanyFileCounts {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly open: number;
  readonly max: number;
}

/** Two caches' counts together (the loop's and the reader threads': the api's metrics). */
export function addCompanyFileCounts(a: CompanyFileCounts, b: CompanyFileCounts): CompanyFileCounts {
  return {
    hits: a.hits + b.hits,
    misses: a.misses + b.misses,
    evictions: a.evictions + b.evictions,
    open: a.open + b.open,
    max: a.max + b.max,
  };
}

/** The prepared statements of every open handle (the api's metrics; @pda/projections model/statement-lru.ts). */
export interface StatementCacheCounts {
  /** Held now over control.sqlite and the open company files. */
  readonly held: number;
  /** Dropped to stay within the bound of their handle, since the process started. */
  readonly evicted: number;
  /** The bound per handle. */
  readonly maxPerFile: number;
}

export interface ProjectionFilesOptions {
  readonly maxOpenCompanies: number;
  /** Prepared statements kept per open file; default DEFAULT_STATEMENTS_PER_HANDLE. */
  readonly maxStatementsPerFile?: number;
  readonly reopenCheckMs: number;
  readonly now: () => number;
  readonly onSwap?: (from: string, to: string) => void;
  /** A company went out of service or came back (logged once per change, not per request). */
  readonly onCompanyFault?: (companyId: string, fault: CompanyFault | undefined) => void;
  /** Opens a company file (tests inject failures); default openCompanyReader. */
  readonly openCompany?: (dataDir: string, companyId: string) => ProjectionDb;
}

export class ProjectionFiles {
  readonly #dataDir: string;
  readonly #options: ProjectionFilesOptions;
  #control: ReadHandle | undefined;
  /** Evicting, deleting or clearing a handle closes it (`dispose`). */
  readonly #companies: LRUCache<string, ReadHandle>;
  #identity: string | undefined;
  #checkedAt = Number.NEGATIVE_INFINITY;
  /** Companies out of service (company_faults), read with the swap check. */
  #faults = new Map<string, CompanyFault>();
  /** Inode of each open company file and when it was last compared with the name on disk. */
  readonly #opened = new Map<string, { ino: number; checkedAt: number }>();
  #hits = 0;
  #misses = 0;
  #evictions = 0;
  readonly #statementCounts = new StatementCounts();
  /** What every handle is opened with: its statement bound and the counts above. */
  readonly #handle: ReadHandleOptions;

  constructor(dataDir: string, options: ProjectionFilesOptions) {
    this.#dataDir = dataDir;
    this.#options = options;
    this.#handle = {
      ...(options.maxStatementsPerFile !== undefined && { maxStatements: options.maxStatementsPerFile }),
      counts: this.#statementCounts,
    };
    // Never evicts by itself: company() makes room first (#evict), which counts the evictions.
    this.#companies = new LRUCache({
      max: Math.max(1, options.maxOpenCompanies),
      dispose: (handle) => handle.close(),
    });
  }

  /** Throws ProjectionError (not found, version not understood). */
  control(): ReadHandle {
    this.#checkSwap();
    return this.#controlHandle();
  }

  #controlHandle(): ReadHandle {
    this.#control ??= new ReadHandle(
      this.#opening(() => openControlReader(this.#dataDir)),
      this.#handle,
    );
    return this.#control;
  }

  /** Throws ProjectionError (not found, version not understood, invalid id, out of service). */
  company(companyId: string): ReadHandle {
    this.#checkSwap();
    const fault = this.#faults.get(companyId);
    if (fault) {
      this.forget(companyId);
      throw new CompanyFileDamagedError(companyId, `${fault.state}: ${fault.reason}`);
    }
    const cached = this.#companies.get(companyId);
    if (cached && this.#sameFile(companyId)) {
      this.#hits++;
      return cached;
    }
    this.#misses++;
    // Make room first, so the bound holds on open files even while this one opens.
    if (this.#companies.size >= this.#companies.max) this.#evict(1);
    const open = this.#options.openCompany ?? openCompanyReader;
    const handle = new ReadHandle(
      this.#opening(() => open(this.#dataDir, companyId)),
      this.#handle,
    );
    this.#companies.set(companyId, handle);
    this.#opened.set(companyId, { ino: this.#inode(companyId) ?? -1, checkedAt: this.#options.now() });
    return handle;
  }

  /** Closes the company's handle (a query met corruption): the next request opens the file again. */
  forget(companyId: string): void {
    this.#opened.delete(companyId);
    this.#companies.delete(companyId);
  }

  /** Whether the open handle still reads the file under the company's name (checked every reopenCheckMs). */
  #sameFile(companyId: string): boolean {
    const opened = this.#opened.get(companyId);
    const now = this.#options.now();
    if (!opened || now - opened.checkedAt < this.#options.reopenCheckMs) return true;
    opened.checkedAt = now;
    if (this.#inode(companyId) === opened.ino && this.#hasHeader(companyId)) return true;
    this.forget(companyId);
    return false;
  }

  /**
   * Whether the file still starts with SQLite's header: a file overwritten in place keeps its inode,
   * and pages this handle has not cached would be read from the garbage (SQLite has no page
   * checksums: an overwritten overflow page reads as text). Reopening then fails as not a database.
   */
  #hasHeader(companyId: string): boolean {
    const header = Buffer.alloc(16);
    try {
      const fd = openSync(companyPath(this.#dataDir, companyId), 'r');
      try {
        readSync(fd, header, 0, 16, 0);
      } finally {
        closeSync(fd);
      }
    } catch {
      return true; // gone or no descriptor: the inode check and the open report those
    }
    return header.toString('latin1') === 'SQLite format 3\u0000';
  }

  #inode(companyId: string): number | undefined {
    try {
      return statSync(companyPath(this.#dataDir, companyId)).ino;
    } catch {
      return undefined;
    }
  }

  get openCompanyCount(): number {
    return this.#companies.size;
  }

  counts(): CompanyFileCounts {
    return {
      hits: this.#hits,
      misses: this.#misses,
      evictions: this.#evictions,
      open: this.#companies.size,
      max: this.#companies.max,
    };
  }

  statements(): StatementCacheCounts {
    return {
      held: this.#statementCounts.held,
      evicted: this.#statementCounts.evicted,
      maxPerFile: this.#handle.maxStatements ?? DEFAULT_STATEMENTS_PER_HANDLE,
    };
  }

  /** Opens through `open`; out of descriptors, closes half of the open company files and retries once. */
  #opening<T>(open: () => T): T {
    return retryOutOfDescriptors(open, () => {
      if (this.#companies.size === 0) return false;
      this.#evict(Math.ceil(this.#companies.size / 2));
      return true;
    });
  }

  #evict(count: number): void {
    for (let n = count; n > 0; n--) {
      if (this.#companies.pop() !== undefined) this.#evictions++;
    }
  }

  close(): void {
    this.#control?.close();
    this.#control = undefined;
    this.#companies.clear();
    this.#opened.clear();
  }

  #checkSwap(): void {
    const now = this.#options.now();
    if (now - this.#checkedAt < this.#options.reopenCheckMs) return;
    this.#checkedAt = now;
    const identity = this.#readIdentity();
    if (this.#identity !== undefined && identity !== this.#identity) {
      this.#options.onSwap?.(this.#identity, identity);
      this.close();
    }
    this.#identity = identity;
    this.#readFaults();
  }

  /** company_faults of control.sqlite (a few rows at most); unreadable control keeps the last view. */
  #readFaults(): void {
    let faults: Map<string, CompanyFault>;
    try {
      faults = new Map(readCompanyFaults(this.#controlHandle().db).map((f) => [f.companyId, f]));
    } catch {
      return; // control.sqlite unreadable: the health check and the requests report it
    }
    for (const [id, fault] of faults) {
      const before = this.#faults.get(id);
      if (before?.state !== fault.state) this.#options.onCompanyFault?.(id, fault);
    }
    for (const id of this.#faults.keys()) if (!faults.has(id)) this.#options.onCompanyFault?.(id, undefined);
    this.#faults = faults;
  }

  #readIdentity(): string {
    const parts: string[] = [];
    try {
      parts.push(realpathSync(this.#dataDir));
    } catch {
      parts.push('missing');
    }
    try {
      parts.push(String(statSync(controlPath(this.#dataDir)).ino));
    } catch {
      parts.push('no-control');
    }
    try {
      parts.push(readFileSync(join(this.#dataDir, 'GENERATION.json'), 'utf8').trim().slice(0, 500));
    } catch {
      parts.push('');
    }
    return parts.join('|');
  }
}
