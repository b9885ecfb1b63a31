import Database from 'better-sqlite3';
import { quoteIdent } from '../../model/quote-ident.ts';
import { classifyFault } from '../../model/storage-faults.ts';
import type { TraceLink } from '../../model/trace-link.ts';
import type { CompanyFile } from '../files/company-file.ts';
import type { CompanyFiles } from '../files/company-files.ts';
import type { SqlValue } from '../plan/coerce.ts';
import type { CompanyOp, Rejection } from '../plan/plan.ts';
import { deleteRow, truncateTable, upsertRow } from './company-rows.ts';
import type { Outcome, Tally } from './result.ts';

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
  trace?: TraceLink,
): void {
  const carried = readCarried(files, ops);
  const file = files.get(companyId);
  file.checkpointIfDue();
  applyCompanyOps(file, ops, tally, rejections, carried, trace);
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
  trace?: TraceLink,
) {
  let outcomes: Outcome[];
  const beforeUs = trace ? file.lastChangedUs : 0; // read only when it will be noted
  try {
    outcomes = file.db.transaction(() => {
      const done = ops.map((op) => run(file, op, carried));
      if (trace) file.recordTrace(trace, beforeUs);
      file.saveChangeTime();
      return done;
    })();
  } catch (error) {
    file.reload();
    if (!isDataError(error)) throw error;
    outcomes = applyOneByOne(file, ops, rejections, carried, trace);
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
  trace: TraceLink | undefined,
): Outcome[] {
  const single = file.db.transaction((op: CompanyOp) => run(file, op, carried));
  const beforeUs = trace ? file.lastChangedUs : 0; // read only when it will be noted
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
      if (trace) file.recordTrace(trace, beforeUs);
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

// ---- values moved rows carry from the file they left ----------------------------------------------

type UpsertOp = Extract<CompanyOp, { kind: 'upsert' }>;

/** Per upsert with a `carry`: the carried columns' values, when the file it names had the row. */
export type Carried = ReadonlyMap<UpsertOp, readonly SqlValue[]>;

/**
 * Reads the values a company's moved rows take from the files they left (plan.ts `Carry`), before
 * the company's transaction. The plan orders that transaction before the other file's (company-
 * order.ts), which replaces the row with a tombstone, so the row is still there, as it was before
 * the batch, also when the batch is redelivered after a crash between the two commits: had the
 * other file committed, this one would have too, and its guards skip the upsert anyway.
 *
 * A file without the row (never projected there, or the move's route predates a delete) carries
 * nothing: the columns stay missing and an insert gets their empty value, as for any row first
 * seen through an update (projections/README.md, "Unavailable values").
 */
function readCarried(files: CompanyFiles, ops: readonly CompanyOp[]): Carried {
  let carried: Map<UpsertOp, readonly SqlValue[]> | undefined;
  for (const op of ops) {
    if (op.kind !== 'upsert' || op.carry === undefined) continue;
    const { from, columns } = op.carry;
    const t = quoteIdent(op.table);
    let row: SqlValue[] | undefined;
    try {
      row = files
        .get(from)
        .statements.get(
          `carry:${op.table}:${columns.join(',')}`,
          () => `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${t} WHERE "id" = ?`,
        )
        .raw()
        .get(op.id) as SqlValue[] | undefined;
    } catch (error) {
      // A damaged file the row leaves has nothing to give (as a file without the row); it is taken
      // out of service on its own turn (apply-batch.ts).
      if (classifyFault(error) !== 'damaged') throw error;
    }
    if (row === undefined) continue;
    carried ??= new Map();
    carried.set(op, row);
  }
  return carried ?? NOTHING;
}

const NOTHING: Carried = new Map();
