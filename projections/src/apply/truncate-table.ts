import { quoteIdent } from '../quote-ident.ts';
import type { CompanyFile } from './company-file.ts';
import type { CompanyOp } from './plan.ts';
import type { Outcome } from './result.ts';
import { touchAllParents } from './touch-parents.ts';

type TruncateOp = Extract<CompanyOp, { kind: 'truncate' }>;

/**
 * TRUNCATE of a tenant table in one company file: every row goes and a floor at this position
 * stays (nothing at or below it comes back). Each row leaves a tombstone at the TRUNCATE's position
 * and change time, and the table's older tombstones stay until pruned, so the deletions feed
 * (GET /v1/deletions) lists every record the TRUNCATE removed: never a silently incomplete list.
 */
export function truncateTable(file: CompanyFile, op: TruncateOp): Outcome {
  const { table, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const changedUs = file.nextChangeTime();
  const t = quoteIdent(table);
  file.statements
    .get(
      `truncate:tombstones:${table}`,
      () =>
        `INSERT INTO tombstones (table_name, id, _src_lsn, _changed_us) SELECT @table, id, @lsn, @changed FROM ${t} WHERE true
         ON CONFLICT (table_name, id) DO UPDATE SET _src_lsn = excluded._src_lsn, _changed_us = excluded._changed_us`,
    )
    .run({ table, lsn, changed: changedUs });
  file.tombstoneTables.add(table);
  file.statements.get(`truncate:${table}`, () => `DELETE FROM ${t}`).run();
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
