import type { TableName } from '@pda/schemas/registry';
import { quoteIdent } from '../../model/quote-ident.ts';
import { type ValuesRenderer, valuesRenderer } from '../../model/representation.ts';
import type { CompanyFile } from '../files/company-file.ts';
import { type TableSpec, tableSpec, upsertStatement } from '../files/table-spec.ts';
import { removeTombstone } from '../files/tombstones.ts';
import type { SqlValue } from '../plan/coerce.ts';
import type { CompanyOp } from '../plan/plan.ts';
import { parentColumns, touchAllParents, touchParents } from './embedded-parents.ts';
import type { Outcome } from './result.ts';

/**
 * The three guarded writes of a tenant row in its company file — upsert, delete, TRUNCATE — run
 * inside the company's transaction (apply-company.ts). Each is skipped at or below the table's
 * TRUNCATE floor, the row's tombstone or the stored row's _src_lsn, so a replayed or reordered
 * change never undoes a newer one. A row embedded in other tables' documents (a contact in its
 * site, a category in its equipment) moves their change time too (embedded-parents.ts).
 */

type UpsertOp = Extract<CompanyOp, { kind: 'upsert' }>;
type DeleteOp = Extract<CompanyOp, { kind: 'delete' }>;
type TruncateOp = Extract<CompanyOp, { kind: 'truncate' }>;

/**
 * Guarded upsert. A newer upsert removes the tombstone (the row exists again). `carried`: the
 * values of `op.carry`'s columns read from the file the row left (apply-company.ts readCarried).
 */
export function upsertRow(file: CompanyFile, op: UpsertOp, carried?: readonly SqlValue[]): Outcome {
  const { table, id, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const tombstone = file.tombstoneLsn(table, id);
  if (tombstone !== undefined && lsn <= tombstone) return 'skipped';

  // A row may change parent (a contact its site): both the old and the new parent must move.
  const parents = parentColumns(table);
  let before: unknown[] | undefined;
  if (parents.length > 0) {
    const stored = storedRow(file, table, parents, id);
    if (stored !== undefined && lsn <= (stored[0] as number)) return 'skipped';
    before = stored?.slice(1);
  }

  const spec = tableSpec('company', table);
  const { values, missing } = withCarried(spec, op, carried);
  const statement = upsertStatement(file.statements, spec, missing);
  const info = spec.hasDocument
    ? statement.run(...values, lsn, file.nextChangeTime(), renderDocument(spec, values))
    : statement.run(...values, lsn, file.nextChangeTime());
  if (info.changes === 0) return 'skipped';
  if (tombstone !== undefined) removeTombstone(file.statements, table, id);
  // Columns the change did not carry kept their stored values: render from the stored row.
  if (spec.hasDocument && missing.length > 0) rerenderStored(file, spec, id);

  const after = parents.map((column, i) =>
    missing.includes(column) ? before?.[i] : values[spec.columns.findIndex((c) => c.name === column)],
  );
  touchParents(file, table, id, before, after);
  return 'applied';
}

/**
 * Guarded delete: the row goes and a tombstone at this position stays (also when the row was
 * never here: a late older upsert must still be refused).
 */
export function deleteRow(file: CompanyFile, op: DeleteOp): Outcome {
  const { table, id, lsn } = op;
  const floor = file.floors.get(table);
  if (floor !== undefined && lsn <= floor) return 'skipped';
  const tombstone = file.tombstoneLsn(table, id);
  if (tombstone !== undefined && lsn <= tombstone) return 'skipped';

  const stored = storedRow(file, table, parentColumns(table), id);
  if (stored !== undefined && lsn <= (stored[0] as number)) return 'skipped';

  if (stored !== undefined) {
    file.statements.get(`delete:row:${table}`, () => `DELETE FROM ${quoteIdent(table)} WHERE id = ?`).run(id);
  }
  file.writeTombstone(table, id, lsn, file.nextChangeTime());
  touchParents(file, table, id, stored?.slice(1), undefined);
  return 'applied';
}

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

/** The stored row's _src_lsn, then its `columns`; undefined when the file does not hold it. */
function storedRow(
  file: CompanyFile,
  table: string,
  columns: readonly string[],
  id: string,
): unknown[] | undefined {
  return file.statements
    .get(
      `row:get:${table}`,
      () =>
        [`SELECT _src_lsn`, ...columns.map(quoteIdent)].join(', ') +
        ` FROM ${quoteIdent(table)} WHERE id = ?`,
    )
    .raw()
    .get(id) as unknown[] | undefined;
}

/** The upsert's values and missing columns once its carried values are in. */
function withCarried(
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

// ---- the stored document (`_json`) of an upserted row -------------------------------------------
// Rendered from the values the upsert writes (model/representation.ts). They are the values SQLite
// stores (STRICT tables keep their types), so the JSON equals what a render of the stored row gives.

interface SpecRendering {
  readonly columns: readonly string[];
  readonly render: ValuesRenderer;
}

/** Per table spec (one per table and process): no key building per upsert. */
const renderings = new WeakMap<TableSpec, SpecRendering>();

function renderingOf(spec: TableSpec): SpecRendering {
  let rendering = renderings.get(spec);
  if (!rendering) {
    const columns = spec.columns.map((column) => column.name);
    rendering = { columns, render: valuesRenderer(spec.table as TableName, columns)! };
    renderings.set(spec, rendering);
  }
  return rendering;
}

function renderDocument(spec: TableSpec, values: readonly unknown[]): string {
  return renderingOf(spec).render(values);
}

/** After an upsert that kept some stored columns (TOAST-unchanged values): render the stored row. */
function rerenderStored(file: CompanyFile, spec: TableSpec, id: string): void {
  const names = renderingOf(spec).columns;
  const t = quoteIdent(spec.table);
  const values = file.statements
    .get(
      `document:row:${spec.table}`,
      () => `SELECT ${names.map(quoteIdent).join(', ')} FROM ${t} WHERE "id" = ?`,
    )
    .raw()
    .get(id) as unknown[] | undefined;
  if (values === undefined) return;
  file.statements
    .get(`document:set:${spec.table}`, () => `UPDATE ${t} SET "_json" = ? WHERE "id" = ?`)
    .run(renderDocument(spec, values), id);
}
