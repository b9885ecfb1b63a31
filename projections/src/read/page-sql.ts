import { quoteIdent } from '../model/quote-ident.ts';
import type { SortKey } from './page.ts';
import type { PageTable } from './tables.ts';

/**
 * The statements of a keyset page, one per plan (projections/README.md, "Pages with a since"). A
 * plan with a since names its indexes (`INDEXED BY`): which one it walks is chosen by
 * since-plan.ts from the answer's size, never left to SQLite, which has no statistics on these
 * files and would walk the sort index whatever the since.
 *
 * - `walk`: no since; the sort's index from the position, as SQLite plans it.
 * - `walk-since`: the sort's index `(column, id, _changed_us)` from the position, keeping the
 *   entries changed at or after the since without reading the rows of the others; in stretches
 *   that end at a bound (`hasBound`: at or before the entry `boundarySql` found), so that a page
 *   passes at most a budget of entries (planned-page.ts, page-budget.ts).
 * - `changed`: the changed rows from the change-time index, their rowid and sort keys only,
 *   sorted; the selected (wide) columns are read for the `limit` winners only.
 */
export type PagePlan = 'walk' | 'walk-since' | 'changed';

export interface PageShape {
  readonly table: PageTable;
  readonly columns: readonly string[];
  readonly sort: readonly SortKey[];
  readonly backward: boolean;
  readonly hasPosition: boolean;
  /** `walk-since` only: the stretch ends at the entry bound to @b0..@bn (inclusive). */
  readonly hasBound?: boolean;
}

/** SQL for one (shape, plan): built from whitelisted names only, values bound. */
export function pageSql(shape: PageShape, plan: PagePlan): string {
  const { table, sort, backward, hasPosition } = shape;
  // Walking backward reads the reversed order from the position, then the caller's rows are reversed.
  const keys = sort.map((key) => ({
    column: quoteIdent(key.column),
    descending: key.descending !== backward,
  }));
  const order = (prefix: string) =>
    keys.map((key) => `${prefix}${key.column} ${key.descending ? 'DESC' : 'ASC'}`).join(', ');
  const position = hasPosition ? [keysetCondition(keys)] : [];
  const name = quoteIdent(table);
  if (plan === 'changed') {
    const inner = [
      `SELECT rowid AS "_r", ${keys.map((key) => key.column).join(', ')}`,
      `FROM ${name} INDEXED BY ${changeIndex(table)}`,
      `WHERE ${['"_changed_us" >= @since', ...position].join(' AND ')}`,
      `ORDER BY ${order('')} LIMIT @limit`,
    ].join(' ');
    return [
      `SELECT ${shape.columns.map((column) => `"s".${quoteIdent(column)}`).join(', ')}`,
      `FROM (${inner}) AS "w" CROSS JOIN ${name} AS "s" ON "s".rowid = "w"."_r"`,
      `ORDER BY ${order('"w".')}`,
    ].join(' ');
  }
  const where =
    plan === 'walk-since'
      ? ['"_changed_us" >= @since', ...position, ...(shape.hasBound ? [boundCondition(keys)] : [])]
      : position;
  const indexed = plan === 'walk' ? '' : ` INDEXED BY ${sortIndex(table, sort[0]!.column)}`;
  return [
    `SELECT ${shape.columns.map(quoteIdent).join(', ')} FROM ${name}${indexed}`,
    where.length > 0 ? `WHERE ${where.join(' AND ')}` : '',
    `ORDER BY ${order('')} LIMIT @limit`,
  ].join(' ');
}

/**
 * The sort keys of the entry `@skip` entries past the position (or the start) in the order of
 * the page: where a stretch of a budgeted walk ends. Steps over the sort's index without reading
 * rows when the order is the index's (column, id).
 */
export function boundarySql(shape: Omit<PageShape, 'columns' | 'hasBound'>): string {
  const { table, sort, backward, hasPosition } = shape;
  const keys = sort.map((key) => ({
    column: quoteIdent(key.column),
    descending: key.descending !== backward,
  }));
  return [
    `SELECT ${keys.map((key) => key.column).join(', ')} FROM ${quoteIdent(table)} INDEXED BY ${sortIndex(table, sort[0]!.column)}`,
    hasPosition ? `WHERE ${keysetCondition(keys)}` : '',
    `ORDER BY ${keys.map((key) => `${key.column} ${key.descending ? 'DESC' : 'ASC'}`).join(', ')}`,
    'LIMIT 1 OFFSET @skip',
  ].join(' ');
}

/**
 * The index that holds a table's rows in the order of its first sort key, with their change time:
 * `<table>_by_<column>` (column, id, _changed_us), `<table>_by_id_changed` (id, _changed_us) for
 * id (migrations/company/006-covering-sort-indexes.sql).
 */
export function sortIndex(table: PageTable, column: string): string {
  return quoteIdent(column === 'id' ? `${table}_by_id_changed` : `${table}_by_${column}`);
}

/** The (_changed_us, id) index of a table (migrations/company/001-initial.sql). */
export function changeIndex(table: PageTable): string {
  return quoteIdent(`${table}_by_changed`);
}

/** "Comes after @p0..@pn in this order". One row-value comparison when every key has the same
 * direction (SQLite walks the (column, id) index with it); otherwise the expanded OR form. */
function keysetCondition(keys: readonly { column: string; descending: boolean }[], param = 'p'): string {
  const first = keys[0]!;
  if (keys.every((key) => key.descending === first.descending)) {
    const op = first.descending ? '<' : '>';
    const left = keys.map((key) => key.column).join(', ');
    const right = keys.map((_, index) => `@${param}${index}`).join(', ');
    return `(${left}) ${op} (${right})`;
  }
  const branches = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((prior, j) => `${prior.column} = @${param}${j}`);
    equal.push(`${key.column} ${key.descending ? '<' : '>'} @${param}${index}`);
    return `(${equal.join(' AND ')})`;
  });
  // The redundant bound on the first key lets SQLite start its (first key, id) index scan at the
  // position instead of filtering from the start of the order.
  const bound = `${first.column} ${first.descending ? '<=' : '>='} @${param}0`;
  return `(${bound} AND (${branches.join(' OR ')}))`;
}

/** "Comes at or before @b0..@bn in this order": the end of a stretch (its last entry included). */
function boundCondition(keys: readonly { column: string; descending: boolean }[]): string {
  const first = keys[0]!;
  if (keys.every((key) => key.descending === first.descending)) {
    const left = keys.map((key) => key.column).join(', ');
    const right = keys.map((_, index) => `@b${index}`).join(', ');
    return `(${left}) ${first.descending ? '>=' : '<='} (${right})`;
  }
  // The bound on the first key lets SQLite end its index scan there.
  return `(${first.column} ${first.descending ? '>=' : '<='} @b0 AND NOT ${keysetCondition(keys, 'b')})`;
}
