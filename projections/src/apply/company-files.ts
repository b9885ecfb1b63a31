import { LRUCache } from 'lru-cache';
import type { ClockUs } from './clock.ts';
import { CompanyFile } from './company-file.ts';

/**
 * A bounded LRU of open company writers. Each open WAL file costs three file descriptors and its
 * page cache; a batch touching more companies than the bound reopens the oldest ones, which is
 * slow (closing the last connection checkpoints and fsyncs the file, ~10 ms): size the bound to
 * the number of companies active at once. Whatever leaves the cache (evicted, cleared) is closed.
 */
export class CompanyFiles {
  readonly #open: LRUCache<string, CompanyFile>;
  readonly #dataDir: string;
  readonly #max: number;
  readonly #clock: ClockUs;

  constructor(dataDir: string, max: number, clock: ClockUs) {
    this.#dataDir = dataDir;
    this.#max = Math.max(1, max);
    this.#clock = clock;
    this.#open = new LRUCache<string, CompanyFile>({ max: this.#max, dispose: (file) => file.close() });
  }

  /** Opens (creating and migrating if needed) the company's file; it becomes the most recent. */
  get(companyId: string): CompanyFile {
    const open = this.#open.get(companyId);
    if (open) return open;
    // Close the oldest before opening: the bound is on open files, never exceeded even briefly.
    if (this.#open.size >= this.#max) this.#open.pop();
    const file = this.#openFile(companyId);
    this.#open.set(companyId, file);
    return file;
  }

  /** Files open now (at most the bound). */
  get size(): number {
    return this.#open.size;
  }

  /** Out of file descriptors (a low `ulimit -n`): give back half of the open files and retry once. */
  #openFile(companyId: string): CompanyFile {
    try {
      return new CompanyFile(this.#dataDir, companyId, this.#clock);
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_CANTOPEN' || this.#open.size === 0) throw error;
      for (let n = Math.ceil(this.#open.size / 2); n > 0; n--) this.#open.pop();
      return new CompanyFile(this.#dataDir, companyId, this.#clock);
    }
  }

  closeAll(): void {
    this.#open.clear();
  }
}
