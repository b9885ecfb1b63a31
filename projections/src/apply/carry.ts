import { quoteIdent } from '../quote-ident.ts';
import { classifyFault } from '../storage-faults.ts';
import type { SqlValue } from './coerce.ts';
import type { CompanyFiles } from './company-files.ts';
import type { CompanyOp } from './plan.ts';
import type { TableSpec } from './table-spec.ts';

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
export function readCarried(files: CompanyFiles, ops: readonly CompanyOp[]): Carried {
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

/** The upsert's values and missing columns once its carried values are in. */
export function withCarried(
  spec: TableSpec,
  op: UpsertOp,
  carried: readonly SqlValue[] | undefined,
): { readonly values: readonly SqlValue[]; readonly missing: readonly string[] } {
  if (carried === undefined || op.carry === undefined) return op;
  const { columns } = op.carry;
  const values = op.values.slice();
  columns.forEach((column, j) => {
    values[spec.columns.findIndex((c) => c.name === column)] = carried[j] ?? null;
  });
  return { values, missing: op.missing.filter((column) => !columns.includes(column)) };
}
