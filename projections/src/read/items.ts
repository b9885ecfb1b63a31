import { type ColumnName, columnNames, type RowOf, type TableName } from '@pda/schemas/registry';
import { quoteIdent } from '../quote-ident.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import { PAGE_TABLE_COLUMNS, type PageTable, type PageTableRows } from './tables.ts';

/** Single records and the embedded relations of a page (one statement per call, not per row). */

export function readById<T extends PageTable>(
  handle: ReadHandle,
  table: T,
  id: string,
): PageTableRows[T] | undefined {
  const statement = handle.statement(`item:${table}`, () => `${selectFrom(table)} WHERE "id" = ?`, {
    raw: true,
  });
  const values = statement.get(id) as unknown[] | undefined;
  return values && rowBuilder<PageTableRows[T]>(PAGE_TABLE_COLUMNS[table] as readonly string[])(values);
}

/**
 * Rows of `table` whose `column` holds one of `values`, grouped by that value, each group ordered
 * by id: the embedded relations of a page (`include`), one statement for the whole page.
 */
export function readRowsWhereIn<T extends TableName>(
  handle: ReadHandle,
  table: T,
  column: ColumnName<T>,
  values: readonly string[],
): Map<string, RowOf<T>[]> {
  const result = new Map<string, RowOf<T>[]>();
  if (values.length === 0) return result;
  const columns = columnNames(table);
  if (!columns.includes(column)) throw new Error(`${table} has no column ${column}`);
  const statement = handle.statement(
    `where-in:${table}:${column}`,
    () =>
      `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(table)} ` +
      `WHERE ${quoteIdent(column)} IN (SELECT value FROM json_each(?)) ORDER BY ${quoteIdent(column)}, "id"`,
    { raw: true },
  );
  const build = rowBuilder<RowOf<T>>(columns);
  for (const rowValues of statement.all(JSON.stringify(values)) as unknown[][]) {
    const row = build(rowValues);
    const value = String(row[column]);
    const group = result.get(value);
    if (group) group.push(row);
    else result.set(value, [row]);
  }
  return result;
}

function selectFrom(table: PageTable): string {
  const columns = PAGE_TABLE_COLUMNS[table].map((column) => quoteIdent(String(column))).join(', ');
  return `SELECT ${columns} FROM ${quoteIdent(table)}`;
}
