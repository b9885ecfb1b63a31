import { UsageError } from '@pda/projections/cli';
import type { ProjectionDb } from '@pda/projections/model';
import type Database from 'better-sqlite3';
import { statementHead } from './statement-head.ts';

/**
 * The analyst's SQL is checked before it runs, on top of the read-only connection (SQLite would
 * refuse a write to the file anyway: `readonly` + `query_only`), so a mistake gets a clear answer
 * instead of a SQLite error, and nothing that changes the connection runs either:
 * - one statement only (better-sqlite3 prepares exactly one);
 * - it must start with SELECT, WITH, VALUES, EXPLAIN or PRAGMA;
 * - a PRAGMA (also under EXPLAIN) must only read: `PRAGMA x` or one of READING_PRAGMA_CALLS with
 *   its argument. This is decided BEFORE the statement is prepared, because SQLite applies a
 *   setting while it compiles the statement: preparing `PRAGMA query_only(0)`, `PRAGMA x = y` or
 *   `EXPLAIN PRAGMA x(y)` has already changed the connection, whatever is done with the statement;
 * - SQLite must call it read-only (sqlite3_stmt_readonly: no INSERT/UPDATE/DELETE/DDL, no VACUUM,
 *   no checkpoint, even inside a WITH) and it must return rows (ATTACH and DETACH do not).
 */

const ALLOWED = new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN', 'PRAGMA']);

/**
 * The pragmas whose parenthesis form reads (its argument names a table or index, or limits the
 * errors reported). Every other `PRAGMA x(…)` sets something and is refused (setter forms such as
 * query_only(0), writable_schema(1), cache_size(5), busy_timeout(1)).
 */
export const READING_PRAGMA_CALLS: ReadonlySet<string> = new Set([
  'table_info',
  'table_xinfo',
  'table_list',
  'index_info',
  'index_xinfo',
  'index_list',
  'foreign_key_list',
  'foreign_key_check',
  'integrity_check',
  'quick_check',
]);

/** Why `sql` is refused before it is prepared, or undefined. */
export function refusalBeforePrepare(sql: string): string | undefined {
  const head = statementHead(sql);
  if (head.keyword === '') return 'the SQL is empty';
  if (!ALLOWED.has(head.keyword)) {
    return `only reading statements run here (SELECT, WITH, VALUES, EXPLAIN, PRAGMA without =), not ${JSON.stringify(head.keyword)}`;
  }
  const pragma = head.pragma;
  if (pragma === undefined || pragma.form === 'query') return undefined;
  if (pragma.form === 'call' && READING_PRAGMA_CALLS.has(pragma.name)) return undefined;
  return `a PRAGMA that sets a value is refused (PRAGMA ${pragma.name || '?'}${
    pragma.form === 'call' ? '(…)' : pragma.form === 'assign' ? ' = …' : ' …'
  }): the files are read-only; PRAGMA name alone reads it`;
}

export function prepareReadOnly(db: ProjectionDb, sql: string): Database.Statement {
  const refused = refusalBeforePrepare(sql);
  if (refused !== undefined) throw new UsageError(refused);
  let statement: Database.Statement;
  try {
    statement = db.prepare(sql);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/more than one statement/i.test(message)) throw new UsageError('one statement at a time');
    throw new Error(`SQL error: ${message}`);
  }
  if (!statement.readonly || !statement.reader) {
    throw new UsageError('the statement would change something; only reading statements run here');
  }
  return statement;
}
