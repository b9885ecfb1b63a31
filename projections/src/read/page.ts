import type { PagePlan } from './page-sql.ts';
import { checkRequest, readPlannedPage } from './planned-page.ts';
import type { ReadHandle } from './read-handle.ts';
import { chooseSincePlan } from './since-plan.ts';
import { PAGE_TABLE_COLUMNS, type PageTable, type PageTableRows, type SortColumn } from './tables.ts';

export { changedPlanMax, sinceScanBudget } from './page-budget.ts';
// Which plan a page with a since takes, and a page read with a given plan (benchmarks and
// diagnostics compare them; readPage is what the api calls).
export type { PagePlan } from './page-sql.ts';
export { readPlannedPage } from './planned-page.ts';
export { chooseSincePlan } from './since-plan.ts';

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
  /**
   * Only rows whose projection change time (`_changed_us`) is at or after this many µs since epoch.
   * The plan that reads them is chosen from how many match (since-plan.ts).
   */
  readonly changedSinceUs?: number | undefined;
  /**
   * With a since: the most entries of the sort index the page may pass (page-budget.ts; default
   * from the limit and the sort). Tests set small ones.
   */
  readonly scanBudget?: number | undefined;
}

export interface Page<Row> {
  /** In sort order, whatever the direction. */
  readonly rows: Row[];
  /** More rows may exist beyond this page in the requested direction. */
  readonly hasMore: boolean;
  /**
   * Set when a since page stopped at its budget before it was full (page-budget.ts): the sort
   * keys of the last entry it passed, in the requested direction. The next page in that direction
   * starts after it (not after the page's last row, which may be far before it, or absent).
   */
  readonly reached?: KeysetPosition;
  /** The plan that read it (since-plan.ts; `walk` without a since): what the api's span reports. */
  readonly plan?: PagePlan;
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
  const plan =
    request.changedSinceUs === undefined
      ? 'walk'
      : chooseSincePlan(handle, table, request.sort, request.limit, request.changedSinceUs);
  return { ...readPlannedPage(handle, table, request, columns, plan), plan };
}
