import type Database from 'better-sqlite3';
import { DEFAULT_STATEMENTS_PER_HANDLE, type StatementCounts, StatementLru } from '../model/statement-lru.ts';

/** The bound of a handle's statements and the process-wide counts its cache reports to (metrics). */
export interface ReadHandleOptions {
  readonly maxStatements?: number;
  readonly counts?: StatementCounts;
}

/**
 * A read-only projection handle together with its prepared statements: the handle cache is the
 * statement cache (docs/architecture.md#code-conventions), so a statement is compiled once per open
 * file, not per request, while it stays among the handle's most recently used `maxStatements`
 * (statement-lru.ts: request parameters choose the shapes, so their number has no bound of its own).
 * Statement SQL is built only from whitelisted identifiers; values are always bound.
 */
export class ReadHandle {
  readonly db: Database.Database;
  readonly #statements: StatementLru;

  constructor(db: Database.Database, options: ReadHandleOptions = {}) {
    this.db = db;
    this.#statements = new StatementLru(
      options.maxStatements ?? DEFAULT_STATEMENTS_PER_HANDLE,
      options.counts,
    );
  }

  /** The statement cached under `key`, prepared from `sql()` on first use (`raw`: rows as arrays). */
  statement(key: string, sql: () => string, options: { raw?: boolean } = {}): Database.Statement {
    return this.#statements.get(key, () => {
      const statement = this.db.prepare(sql());
      if (options.raw) statement.raw(true);
      return statement;
    });
  }

  /** Statements held now (at most the bound). */
  get statementCount(): number {
    return this.#statements.size;
  }

  /**
   * Runs `read` inside one read transaction, so every statement sees the same committed state
   * (a page and the relations embedded in it come from one snapshot even while ingest writes).
   */
  snapshot<T>(read: () => T): T {
    if (this.db.inTransaction) return read();
    this.statement('begin', () => 'BEGIN').run();
    try {
      return read();
    } finally {
      this.statement('commit', () => 'COMMIT').run();
    }
  }

  close(): void {
    this.#statements.clear();
    if (this.db.open) this.db.close();
  }
}
