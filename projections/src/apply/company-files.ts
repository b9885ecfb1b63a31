import type { ClockUs } from './clock.ts';
import { CompanyFile } from './company-file.ts';

/**
 * A bounded LRU of open company writers. Each open WAL file costs three file descriptors and its
 * page cache; a batch touching more companies than the bound simply reopens the oldest ones.
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
      file = new CompanyFile(this.#dataDir, companyId, this.#clock);
      if (this.#open.size >= this.#max) this.#evictOldest();
    }
    this.#open.set(companyId, file);
    return file;
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
