import { quoteIdent } from '../quote-ident.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import {
  PAGE_TABLE_COLUMNS,
  type PageTable,
  type PageTableRows,
  SORT_COLUMNS,
  type SortColumn,
} from './tables.ts';

/**
 * Keyset pages over a company table (docs/decisions/0003-keyset-cursors.md: page 20,000 as fast as
 * page 1, so never OFFSET and never count(*)). A page asks for `limit + 1` rows: the extra row only
 * says whether more follow in that direction.
 */

export interface SortKey {
  readonly column: SortColumn;
  readonly descending: boolean;
}

/** Values of the sort columns (in sort order) of the row a page starts after or ends before. */
export type KeysetPosition = readonly string[];

export interface PageRequest {
  /** A total order: the last key is `id` (ids are unique). */
  readonly sort: readonly SortKey[];
  /** Rows wanted, at least 1. */
  readonly limit: number;
  /** `after`: rows following `position` in sort order; `before`: rows preceding it (returned in sort order). */
  readonly direction: 'after' | 'before';
  /** Absent: from the start (`after`) or the end (`before`) of the order. */
  readonly position?: KeysetPosition | undefined;
  /** Only rows whose projection change time (`_changed_us`) is at or after this many µs since epoch. */
  readonly changedSinceUs?: number | undefined;
}

export interface Page<Row> {
  /** In sort order, whatever the direction. */
  readonly rows: Row[];
  /** More rows exist beyond this page in the requested direction. */
  readonly hasMore: boolean;
}

/**
 * One page of `table`'s rows, each with every column, or only `columns` (a stable array, e.g.
 * the stored document and the sort keys: the row builder and the statement are cached by it).
 */
export function readPage<T extends PageTable>(
  handle: ReadHandle,
  table: T,
  request: PageRequest,
): Page<PageTableRows[T]>;
export function readPage(
  handle: ReadHandle,
  table: PageTable,
  request: PageRequest,
  columns: readonly string[],
): Page<Record<string, unknown>>;
export function readPage(
  handle: ReadHandle,
  table: PageTable,
  request: PageRequest,
  columns: readonly string[] = PAGE_TABLE_COLUMNS[table] as readonly string[],
): Page<Record<string, unknown>> {
  checkRequest(request);
  const backward = request.direction === 'before';
  const hasPosition = request.position !== undefined;
  const hasSince = request.changedSinceUs !== undefined;
  const signature = request.sort.map((key) => `${key.descending ? '-' : ''}${key.column}`).join(',');
  const statement = handle.statement(
    `page:${table}:${columnsKey(columns)}:${signature}:${request.direction}:${hasPosition}:${hasSince}`,
    () => pageSql(table, columns, request.sort, backward, hasPosition, hasSince),
    { raw: true },
  );
  const params: Record<string, string | number> = { limit: request.limit + 1 };
  if (request.changedSinceUs !== undefined) params.since = request.changedSinceUs;
  request.position?.forEach((value, index) => {
    params[`p${index}`] = value;
  });
  const values = statement.all(params) as unknown[][];
  const hasMore = values.length > request.limit;
  if (hasMore) values.length = request.limit;
  const build = rowBuilder<Record<string, unknown>>(columns);
  const rows = values.map(build);
  if (backward) rows.reverse();
  return { rows, hasMore };
}

/** A short statement-cache key per column list (computed once per list). */
const columnKeys = new WeakMap<readonly string[], string>();
function columnsKey(columns: readonly string[]): string {
  let key = columnKeys.get(columns);
  if (key === undefined) {
    key = columns.join(',');
    columnKeys.set(columns, key);
  }
  return key;
}

function checkRequest(request: PageRequest): void {
  const last = request.sort[request.sort.length - 1];
  if (!last || last.column !== 'id') throw new Error('page sort must end with id');
  for (const key of request.sort) {
    if (!SORT_COLUMNS.includes(key.column)) throw new Error(`not a sort column: ${key.column}`);
  }
  if (!Number.isInteger(request.limit) || request.limit < 1) throw new Error('page limit must be >= 1');
  if (request.position && request.position.length !== request.sort.length) {
    throw new Error('keyset position must hold one value per sort key');
  }
}

/** SQL for one (table, sort, direction, shape): built from whitelisted names only, values bound. */
function pageSql(
  table: PageTable,
  selected: readonly string[],
  sort: readonly SortKey[],
  backward: boolean,
  hasPosition: boolean,
  hasSince: boolean,
): string {
  const columns = selected.map(quoteIdent).join(', ');
  // Walking backward reads the reversed order from the position, then the caller's rows are reversed.
  const keys = sort.map((key) => ({
    column: quoteIdent(key.column),
    descending: key.descending !== backward,
  }));
  const where: string[] = [];
  if (hasSince) where.push('"_changed_us" >= @since');
  if (hasPosition) where.push(keysetCondition(keys));
  const order = keys.map((key) => `${key.column} ${key.descending ? 'DESC' : 'ASC'}`).join(', ');
  return [
    `SELECT ${columns} FROM ${quoteIdent(table)}`,
    where.length > 0 ? `WHERE ${where.join(' AND ')}` : '',
    `ORDER BY ${order} LIMIT @limit`,
  ].join(' ');
}

/** "Comes after @p0..@pn in this order". One row-value comparison when every key has the same
 * direction (SQLite walks the (column, id) index with it); otherwise the expanded OR form. */
function keysetCondition(keys: readonly { column: string; descending: boolean }[]): string {
  const first = keys[0]!;
  if (keys.every((key) => key.descending === first.descending)) {
    const op = first.descending ? '<' : '>';
    const left = keys.map((key) => key.column).join(', ');
    const right = keys.map((_, index) => `@p${index}`).join(', ');
    return `(${left}) ${op} (${right})`;
  }
  const branches = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((prior, j) => `${prior.column} = @p${j}`);
    equal.push(`${key.column} ${key.descending ? '<' : '>'} @p${index}`);
    return `(${equal.join(' AND ')})`;
  });
  // The redundant bound on the first key lets SQLite start its (first key, id) index scan at the
  // position instead of filtering from the start of the order.
  const bound = `${first.column} ${first.descending ? '<=' : '>='} @p0`;
  return `(${bound} AND (${branches.join(' OR ')}))`;
}
