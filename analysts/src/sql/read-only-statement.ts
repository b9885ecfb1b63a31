import type { ProjectionDb } from '@pda/projections';
import { UsageError } from '@pda/projections/cli';
import type Database from 'better-sqlite3';

/**
 * The analyst's SQL is checked before it runs, on top of the read-only connection (SQLite would
 * refuse a write to the file anyway: `readonly` + `query_only`), so a mistake gets a clear answer
 * instead of a SQLite error, and nothing that changes the connection runs either:
 * - one statement only (better-sqlite3 prepares exactly one);
 * - it must start with SELECT, WITH, VALUES, EXPLAIN or PRAGMA, and a PRAGMA must not set anything
 *   (`PRAGMA x = y`, which includes query_only and writable_schema);
 * - SQLite must call it read-only (sqlite3_stmt_readonly: no INSERT/UPDATE/DELETE/DDL, no VACUUM,
 *   no checkpoint, even inside a WITH) and it must return rows (ATTACH and DETACH do not).
 */

const ALLOWED = /^(SELECT|WITH|VALUES|EXPLAIN|PRAGMA)\b/i;

/** Drops leading whitespace and comments, so the first keyword can be checked. */
function firstKeyword(sql: string): string {
  let rest = sql;
  for (;;) {
    const trimmed = rest.trimStart();
    if (trimmed.startsWith('--')) {
      const end = trimmed.indexOf('\n');
      rest = end === -1 ? '' : trimmed.slice(end + 1);
    } else if (trimmed.startsWith('/*')) {
      const end = trimmed.indexOf('*/');
      rest = end === -1 ? '' : trimmed.slice(end + 2);
    } else {
      return trimmed;
    }
  }
}

export function prepareReadOnly(db: ProjectionDb, sql: string): Database.Statement {
  const text = firstKeyword(sql);
  if (text === '') throw new UsageError('the SQL is empty');
  if (!ALLOWED.test(text)) {
    throw new UsageError(
      `only reading statements run here (SELECT, WITH, VALUES, EXPLAIN, PRAGMA without =), not ${JSON.stringify(
        text.split(/\s/, 1)[0]?.toUpperCase(),
      )}`,
    );
  }
  if (/^PRAGMA\b[^;]*=/i.test(text))
    throw new UsageError('a PRAGMA that sets a value is refused: the files are read-only');
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
