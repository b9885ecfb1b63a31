import type { StatementCache } from './statement-cache.ts';

/**
 * Versioned delete markers (company files and control.sqlite share the layout; company files also
 * store the change time of the delete). A change at or below a tombstone's position is skipped.
 */

export function tombstoneLsn(statements: StatementCache, table: string, id: string): number | undefined {
  return statements
    .get('tombstone:get', () => 'SELECT _src_lsn FROM tombstones WHERE table_name = ? AND id = ?')
    .pluck()
    .get(table, id) as number | undefined;
}

export function removeTombstone(statements: StatementCache, table: string, id: string): void {
  statements
    .get('tombstone:delete', () => 'DELETE FROM tombstones WHERE table_name = ? AND id = ?')
    .run(table, id);
}

export function writeCompanyTombstone(
  statements: StatementCache,
  table: string,
  id: string,
  lsn: number,
  changedUs: number,
): void {
  statements
    .get(
      'tombstone:put',
      () =>
        `INSERT INTO tombstones (table_name, id, _src_lsn, _changed_us) VALUES (?, ?, ?, ?)
         ON CONFLICT (table_name, id) DO UPDATE SET _src_lsn = excluded._src_lsn, _changed_us = excluded._changed_us`,
    )
    .run(table, id, lsn, changedUs);
}

export function writeControlTombstone(
  statements: StatementCache,
  table: string,
  id: string,
  lsn: number,
): void {
  statements
    .get(
      'tombstone:put',
      () =>
        `INSERT INTO tombstones (table_name, id, _src_lsn) VALUES (?, ?, ?)
         ON CONFLICT (table_name, id) DO UPDATE SET _src_lsn = excluded._src_lsn`,
    )
    .run(table, id, lsn);
}
