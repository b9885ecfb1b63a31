import type { Statement } from 'better-sqlite3';
import type { ProjectionDb } from '../../model/open.ts';
import {
  DEFAULT_STATEMENTS_PER_HANDLE,
  type StatementCounts,
  StatementLru,
} from '../../model/statement-lru.ts';

/**
 * Prepared statements live as long as their handle (better-sqlite3 finalizes them on close), so
 * the handle cache is the statement cache: each SQL text is prepared once per open file while it
 * stays among the file's most recently used `max` (statement-lru.ts: upserts are prepared per set
 * of columns Debezium could not send, a number with no bound of its own).
 */
export class StatementCache {
  readonly db: ProjectionDb;
  readonly #statements: StatementLru;

  constructor(db: ProjectionDb, max: number = DEFAULT_STATEMENTS_PER_HANDLE, counts?: StatementCounts) {
    this.db = db;
    this.#statements = new StatementLru(max, counts);
  }

  /** `build` runs only on the first use of `key` (and again after the statement was evicted). */
  get(key: string, build: () => string): Statement {
    return this.#statements.get(key, () => this.db.prepare(build()));
  }

  /** Statements held now (at most the bound). */
  get size(): number {
    return this.#statements.size;
  }

  /** Drops the statements (their file is closing). */
  clear(): void {
    this.#statements.clear();
  }
}
