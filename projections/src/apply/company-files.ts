import type { ClockUs } from './clock.ts';
import { CompanyFile } from './company-file.ts';

/**
 * A bounded LRU of open company writers. Each open WAL file costs three file descriptors and its
 * page cache; a batch touching more companies than the bound reopens the oldest ones, which is
 * slow (closing the last connection checkpoints and fsyncs the file, ~10 ms): size the bound to
 * the number of companies active at once.
 */
export class CompanyFiles {
  readonly #open = new Map<string, CompanyFile>();
  readonly #dataDir: string;
  readonly #max: number;
  readonly #clock: ClockUs;

  constructor(dataDir: string, max: number, clock: ClockUs) {
    this.#dataDir = dataDir;
    this.#max = Math.max(1, max);
    this.#clock = clock;
  }

  /** Opens (creating and migrating if needed) the company's file. */
  get(companyId: string): CompanyFile {
    let file = this.#open.get(companyId);
    if (file) {
      // Re-insert: Map iteration order is the recency order.
      this.#open.delete(companyId);
    } else {
      if (this.#open.size >= this.#max) this.#evictOldest();
      file = this.#openFile(companyId);
    }
    this.#open.set(companyId, file);
    return file;
  }

  /** Out of file descriptors (a low `ulimit -n`): give back half of the open files and retry once. */
  #openFile(companyId: string): CompanyFile {
    try {
      return new CompanyFile(this.#dataDir, companyId, this.#clock);
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_CANTOPEN' || this.#open.size === 0) throw error;
      for (let n = Math.ceil(this.#open.size / 2); n > 0; n--) this.#evictOldest();
      return new CompanyFile(this.#dataDir, companyId, this.#clock);
    }
  }

  closeAll(): void {
    for (const file of this.#open.values()) file.close();
    this.#open.clear();
  }

  #evictOldest(): void {
    const oldest = this.#open.keys().next();
    if (oldest.done) return;
    this.#open.get(oldest.value)?.close();
    this.#open.delete(oldest.value);
  }
}
