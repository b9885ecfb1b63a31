import { quoteIdent } from '../quote-ident.ts';
import type { CompanyFile } from './company-file.ts';
import type { CompanyOp } from './plan.ts';
import type { Outcome } from './result.ts';
import { touchAllParents } from './touch-parents.ts';

type TruncateOp = Extract<CompanyOp, { kind: 'truncate' }>;

/**
 * TRUNCATE of a tenant table in one company file: every row and tombstone of the table goes and a
 * floor at this position stays (it supersedes the tombstones: nothing at or below it comes back).
 */
export function truncateTable(file: CompanyFile, op: TruncateOp): Outcome {
  const { table, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const changedUs = file.nextChangeTime();
  file.statements.get(`truncate:${table}`, () => `DELETE FROM ${quoteIdent(table)}`).run();
  file.statements.get('truncate:tombstones', () => 'DELETE FROM tombstones WHERE table_name = ?').run(table);
  file.statements
    .get(
      'truncate:floor',
      () =>
        `INSERT INTO truncations (table_name, _src_lsn, _changed_us) VALUES (?, ?, ?)
         ON CONFLICT (table_name) DO UPDATE SET _src_lsn = excluded._src_lsn, _changed_us = excluded._changed_us`,
    )
    .run(table, lsn, changedUs);
  file.floors.set(table, lsn);
  touchAllParents(file, table);
  return 'applied';
}
