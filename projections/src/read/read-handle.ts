import type Database from 'better-sqlite3';

/**
 * A read-only projection handle together with its prepared statements: the handle cache is the
 * statement cache (docs/architecture.md#code-conventions), so a statement is compiled once per open
 * file, never per request. Statement SQL is built only from whitelisted identifiers; values are always bound.
 */
export class ReadHandle {
  readonly db: Database.Database;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Database.Database) {
    this.db = db;
  }

  /** The statement cached under `key`, prepared from `sql()` on first use (`raw`: rows as arrays). */
  statement(key: string, sql: () => string, options: { raw?: boolean } = {}): Database.Statement {
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.db.prepare(sql());
      if (options.raw) statement.raw(true);
      this.#statements.set(key, statement);
    }
    return statement;
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
