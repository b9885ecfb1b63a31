import { readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { controlPath, openCompanyReader, openControlReader, ReadHandle } from '@pda/projections';
import { LRUCache } from 'lru-cache';

/**
 * Read-only handles on the projection files: control.sqlite plus a bounded LRU of company files
 * (each handle carries its prepared statements). When ingest swaps in rebuilt files, every handle
 * is closed and reopened lazily on the new files.
 *
 * Swap signal (ingest "Rebuild", ingest/src/rebuild/generations.ts): the identity of the data
 * directory = its resolved realpath (`<dir> -> <dir>.generations/<id>`, swapped by renaming a new
 * symlink over the old one), plus the inode of control.sqlite (files renamed into place) and the
 * generation's GENERATION.json. It is checked at most every
 * `reopenCheckMs`; requests keep reading the old files until then, which stay valid while open.
 * Handlers use a handle synchronously (better-sqlite3), so closing between requests is safe.
 */

export interface ProjectionFilesOptions {
  readonly maxOpenCompanies: number;
  readonly reopenCheckMs: number;
  readonly now: () => number;
  readonly onSwap?: (from: string, to: string) => void;
}

export class ProjectionFiles {
  readonly #dataDir: string;
  readonly #options: ProjectionFilesOptions;
  #control: ReadHandle | undefined;
  /** Evicting, deleting or clearing a handle closes it (`dispose`). */
  readonly #companies: LRUCache<string, ReadHandle>;
  #identity: string | undefined;
  #checkedAt = Number.NEGATIVE_INFINITY;

  constructor(dataDir: string, options: ProjectionFilesOptions) {
    this.#dataDir = dataDir;
    this.#options = options;
    this.#companies = new LRUCache({
      max: options.maxOpenCompanies,
      dispose: (handle) => handle.close(),
    });
  }

  /** Throws ProjectionError (not found, version not understood). */
  control(): ReadHandle {
    this.#checkSwap();
    this.#control ??= new ReadHandle(openControlReader(this.#dataDir));
    return this.#control;
  }

  /** Throws ProjectionError (not found, version not understood, invalid id). */
  company(companyId: string): ReadHandle {
    this.#checkSwap();
    const cached = this.#companies.get(companyId);
    if (cached) return cached;
    const handle = new ReadHandle(openCompanyReader(this.#dataDir, companyId));
    this.#companies.set(companyId, handle);
    return handle;
  }

  get openCompanyCount(): number {
    return this.#companies.size;
  }

  close(): void {
    this.#control?.close();
    this.#control = undefined;
    this.#companies.clear();
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
