import Database from 'better-sqlite3';
import { type Carried, readCarried } from './carry.ts';
import type { CompanyFile } from './company-file.ts';
import type { CompanyFiles } from './company-files.ts';
import { deleteRow } from './delete-row.ts';
import type { CompanyOp, Rejection } from './plan.ts';
import type { Outcome, Tally } from './result.ts';
import { truncateTable } from './truncate-table.ts';
import { upsertRow } from './upsert-row.ts';

/**
 * A company's share of a batch: the values its moved rows take from other files first (read before
 * opening its own, so a small cache cannot close it under the transaction), then its transaction.
 */
export function applyCompany(
  files: CompanyFiles,
  companyId: string,
  ops: readonly CompanyOp[],
  tally: Tally,
  rejections: Rejection[],
): void {
  const carried = readCarried(files, ops);
  applyCompanyOps(files.get(companyId), ops, tally, rejections, carried);
}

/**
 * All of a batch's operations on one company file in ONE transaction (10,000 events over 300 companies
 * are 300 short transactions; docs/decisions/0006-single-writer-group-commit.md), the change-time
 * counter saved in the same one.
 *
 * Rows are validated while planning, so SQLite should never refuse one; if it still does (a data
 * error, not an I/O one), the transaction is rolled back and redone with a savepoint per operation,
 * refusing only the offending ones: a bad row never blocks its company.
 */
export function applyCompanyOps(
  file: CompanyFile,
  ops: readonly CompanyOp[],
  tally: Tally,
  rejections: Rejection[],
  carried: Carried,
) {
  let outcomes: Outcome[];
  try {
    outcomes = file.db.transaction(() => {
      const done = ops.map((op) => run(file, op, carried));
      file.saveChangeTime();
      return done;
    })();
  } catch (error) {
    file.reload();
    if (!isDataError(error)) throw error;
    outcomes = applyOneByOne(file, ops, rejections, carried);
  }
  ops.forEach((op, i) => {
    if (!op.derived) tally.count(op.change.table, outcomes[i] ?? 'rejected');
  });
}

function applyOneByOne(
  file: CompanyFile,
  ops: readonly CompanyOp[],
  rejections: Rejection[],
  carried: Carried,
): Outcome[] {
  const single = file.db.transaction((op: CompanyOp) => run(file, op, carried));
  try {
    return file.db.transaction(() => {
      const done = ops.map((op): Outcome => {
        try {
          return single(op); // nested: a savepoint
        } catch (error) {
          if (!isDataError(error)) throw error;
          rejections.push({ change: op.change, reason: `rejected by SQLite: ${(error as Error).message}` });
          return 'rejected';
        }
      });
      file.saveChangeTime();
      return done;
    })();
  } catch (error) {
    file.reload();
    throw error;
  }
}

function run(file: CompanyFile, op: CompanyOp, carried: Carried): Outcome {
  switch (op.kind) {
    case 'upsert':
      return upsertRow(file, op, carried.get(op));
    case 'delete':
      return deleteRow(file, op);
    case 'truncate':
      return truncateTable(file, op);
  }
}

/** Errors caused by the data of one row (constraint, type, size), as opposed to I/O or locking. */
export function isDataError(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError && /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(error.code)
  );
}
