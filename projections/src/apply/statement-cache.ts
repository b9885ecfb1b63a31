import type { Statement } from 'better-sqlite3';
import type { ProjectionDb } from '../open.ts';

/**
 * Prepared statements live as long as their handle (better-sqlite3 finalizes them on close), so
 * the handle cache is the statement cache: each SQL text is prepared once per open file.
 */
export class StatementCache {
  readonly db: ProjectionDb;
  readonly #statements = new Map<string, Statement>();

  constructor(db: ProjectionDb) {
    this.db = db;
  }

  /** `build` runs only on the first use of `key`. */
  get(key: string, build: () => string): Statement {
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.db.prepare(build());
      this.#statements.set(key, statement);
    }
    return statement;
  }
}
