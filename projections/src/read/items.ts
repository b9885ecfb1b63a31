import { columnNames, type TableName } from '@pda/schemas/registry';
import { quoteIdent } from '../model/quote-ident.ts';
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
 *
 * `perValue`: at most that many rows per value, the first by id. Each value's rows are then read
 * through the `(column, id)` index up to its `perValue`-th id (found by stepping over that many
 * index entries), so a value with a million rows costs what one with `perValue` costs.
 */
export function readRowsWhereIn(
  handle: ReadHandle,
  table: TableName,
  column: string,
  values: readonly string[],
  columns: readonly string[],
  perValue?: number,
): Map<string, Record<string, unknown>[]> {
  const result = new Map<string, Record<string, unknown>[]>();
  if (values.length === 0) return result;
  const known: readonly string[] = columnNames(table);
  if (!known.includes(column)) throw new Error(`${table} has no column ${column}`);
  const c = quoteIdent(column);
  const statement =
    perValue === undefined
      ? handle.statement(
          `where-in:${table}:${column}:${columns.join(',')}`,
          () =>
            `${selectFrom(table, columns)} ` +
            `WHERE ${c} IN (SELECT value FROM json_each(?)) ORDER BY ${c}, "id"`,
          { raw: true },
        )
      : handle.statement(
          `where-in-first:${table}:${column}:${columns.join(',')}`,
          () => {
            const t = quoteIdent(table);
            // Ids are uuids (ASCII): char(1114111) sorts after every one of them (no limit reached).
            return `SELECT ${columns.map((name) => `t.${quoteIdent(name)}`).join(', ')}
              FROM json_each(?) AS k JOIN ${t} AS t ON t.${c} = k.value
               AND t."id" <= coalesce((SELECT s."id" FROM ${t} AS s WHERE s.${c} = k.value
                                       ORDER BY s."id" LIMIT 1 OFFSET ?), char(1114111))
              ORDER BY t.${c}, t."id"`;
          },
          { raw: true },
        );
  const parameters: unknown[] = [JSON.stringify(values)];
  if (perValue !== undefined) parameters.push(Math.max(0, Math.floor(perValue) - 1));
  const build = rowBuilder<Record<string, unknown>>(columns);
  for (const rowValues of statement.all(...parameters) as unknown[][]) {
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
