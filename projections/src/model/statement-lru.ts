import type { Statement } from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

/**
 * The prepared statements of one open handle, bounded: the most recently used `max` are kept and
 * an evicted one is prepared again on its next use. Statement shapes multiply with what a request
 * may choose (on the api: resource × columns of a sparse fieldset × sort × direction × plan; on the
 * writer: each set of columns Debezium could not send), so without a bound one handle could hold
 * thousands, each holding SQLite memory and costing a prepare on its first use. Used by
 * read/read-handle.ts (api) and write/files/statement-cache.ts (ingest).
 */
export const DEFAULT_STATEMENTS_PER_HANDLE = 256;

/**
 * Shared by every statement cache of one process, for its metrics: statements held now, and
 * statements dropped to make room. A handle's statements leave `held` when it closes.
 */
export class StatementCounts {
  held = 0;
  evicted = 0;
}

/** What a writer's files are given: the bound per file and the counts they share. */
export interface StatementBound {
  readonly max: number;
  readonly counts: StatementCounts;
}

export class StatementLru {
  readonly max: number;
  readonly #cache: LRUCache<string, Statement>;
  readonly #counts: StatementCounts;

  constructor(max: number = DEFAULT_STATEMENTS_PER_HANDLE, counts: StatementCounts = new StatementCounts()) {
    this.max = Math.max(1, max);
    // better-sqlite3 finalizes a statement when it is garbage collected or its database closes;
    // dropping it here is all eviction needs (a caller still holding it may finish using it).
    this.#cache = new LRUCache<string, Statement>({
      max: this.max,
      dispose: (_statement, _key, reason) => {
        counts.held--;
        if (reason === 'evict') counts.evicted++;
      },
    });
    this.#counts = counts;
  }

  /** The statement cached under `key`, prepared with `prepare` when it is not (or no longer) held. */
  get(key: string, prepare: () => Statement): Statement {
    let statement = this.#cache.get(key);
    if (statement === undefined) {
      statement = prepare();
      this.#cache.set(key, statement);
      this.#counts.held++;
    }
    return statement;
  }

  /** Statements held now (at most `max`). */
  get size(): number {
    return this.#cache.size;
  }

  /** Drops every statement (the handle is closing). */
  clear(): void {
    this.#cache.clear();
  }
}
