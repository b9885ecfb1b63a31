import { columnNames, type TableName } from '@pda/schemas/registry';
import { quoteIdent } from '../quote-ident.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import { PAGE_TABLE_COLUMNS, type PageTable, type PageTableRows } from './tables.ts';

/** Single records and the embedded relations of a page (one statement per call, not per row). */

export function readById<T extends PageTable>(
  handle: ReadHandle,
  table: T,
  id: string,
): PageTableRows[T] | undefined;
export function readById(
  handle: ReadHandle,
  table: PageTable,
  id: string,
  columns: readonly string[],
): Record<string, unknown> | undefined;
export function readById(
  handle: ReadHandle,
  table: PageTable,
  id: string,
  columns: readonly string[] = PAGE_TABLE_COLUMNS[table] as readonly string[],
): Record<string, unknown> | undefined {
  const statement = handle.statement(
    `item:${table}:${columns.join(',')}`,
    () => `${selectFrom(table, columns)} WHERE "id" = ?`,
    { raw: true },
  );
  const values = statement.get(id) as unknown[] | undefined;
  return values && rowBuilder<Record<string, unknown>>(columns)(values);
}

/**
 * Rows of `table` whose `column` holds one of `values`, grouped by that value, each group ordered
 * by id: the embedded relations of a page (`include`), one statement for the whole page. Each row
 * has `columns` (a stable array, which must include `column`).
 */
export function readRowsWhereIn(
  handle: ReadHandle,
  table: TableName,
  column: string,
  values: readonly string[],
  columns: readonly string[],
): Map<string, Record<string, unknown>[]> {
  const result = new Map<string, Record<string, unknown>[]>();
  if (values.length === 0) return result;
  const known: readonly string[] = columnNames(table);
  if (!known.includes(column)) throw new Error(`${table} has no column ${column}`);
  const statement = handle.statement(
    `where-in:${table}:${column}:${columns.join(',')}`,
    () =>
      `${selectFrom(table, columns)} ` +
      `WHERE ${quoteIdent(column)} IN (SELECT value FROM json_each(?)) ORDER BY ${quoteIdent(column)}, "id"`,
    { raw: true },
  );
  const build = rowBuilder<Record<string, unknown>>(columns);
  for (const rowValues of statement.all(JSON.stringify(values)) as unknown[][]) {
    const row = build(rowValues);
    const value = String(row[column]);
    const group = result.get(value);
    if (group) group.push(row);
    else result.set(value, [row]);
  }
  return result;
}

function selectFrom(table: string, columns: readonly string[]): string {
  return `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(table)}`;
}
