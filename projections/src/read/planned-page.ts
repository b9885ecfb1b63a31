import { budgetedScan } from './budgeted-scan.ts';
import type { KeysetPosition, Page, PageRequest } from './page.ts';
import { firstStretch, sinceScanBudget } from './page-budget.ts';
import { boundarySql, type PagePlan, type PageShape, pageSql } from './page-sql.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import { type PageTable, SORT_COLUMNS } from './tables.ts';

/**
 * One page read with a given plan (page-sql.ts). readPage chooses the plan; tests force each one
 * to show that every plan returns the same rows. `request` is checked (checkRequest).
 */
export function readPlannedPage(
  handle: ReadHandle,
  table: PageTable,
  request: PageRequest,
  columns: readonly string[],
  plan: PagePlan,
): Page<Record<string, unknown>> {
  if ((plan === 'walk') !== (request.changedSinceUs === undefined)) {
    throw new Error(`plan ${plan} does not fit a request ${plan === 'walk' ? 'with' : 'without'} a since`);
  }
  const read =
    plan === 'walk-since'
      ? readBudgetedWalk(handle, table, request, columns)
      : readOnce(handle, table, request, columns, plan);
  const build = rowBuilder<Record<string, unknown>>(columns);
  const rows = read.values.map(build);
  if (request.direction === 'before') rows.reverse();
  return read.reached === undefined
    ? { rows, hasMore: read.hasMore }
    : { rows, hasMore: read.hasMore, reached: read.reached };
}

/** The stretch ends' statements select the sort keys only. */
const NO_COLUMNS: readonly string[] = [];

interface PageValues {
  /** In the order of travel (reversed for `before`). */
  readonly values: unknown[][];
  readonly hasMore: boolean;
  readonly reached?: KeysetPosition;
}

/** One statement: LIMIT limit + 1 rows (`walk`, `changed`). */
function readOnce(
  handle: ReadHandle,
  table: PageTable,
  request: PageRequest,
  columns: readonly string[],
  plan: PagePlan,
): PageValues {
  const shape = pageShape(table, columns, request, request.position !== undefined, false);
  const statement = handle.statement(statementKey('page', shape, plan), () => pageSql(shape, plan), {
    raw: true,
  });
  const params = keyParams('p', request.position);
  params.limit = request.limit + 1;
  if (request.changedSinceUs !== undefined) params.since = request.changedSinceUs;
  const values = statement.all(params) as unknown[][];
  const hasMore = values.length > request.limit;
  if (hasMore) values.length = request.limit;
  return { values, hasMore };
}

/** `walk-since`: a budgeted scan of the sort index (budgeted-scan.ts) for the since's matches. */
function readBudgetedWalk(
  handle: ReadHandle,
  table: PageTable,
  request: PageRequest,
  columns: readonly string[],
): PageValues {
  const budget = request.scanBudget ?? scanBudget(request);
  const result = budgetedScan<KeysetPosition, unknown[]>({
    budget,
    firstStretch: firstStretch(request.limit, budget),
    want: request.limit + 1,
    from: request.position,
    boundary: (from, skip) => {
      const shape = pageShape(table, NO_COLUMNS, request, from !== undefined, false);
      const end = handle
        .statement(statementKey('stretch-end', shape, 'walk-since'), () => boundarySql(shape), { raw: true })
        .get({ ...keyParams('p', from), skip }) as unknown[] | undefined;
      return end?.map(String);
    },
    matches: (from, bound, count) => {
      const shape = pageShape(table, columns, request, from !== undefined, bound !== undefined);
      const params = { ...keyParams('p', from), ...keyParams('b', bound) };
      params.since = request.changedSinceUs!;
      params.limit = count;
      return handle
        .statement(statementKey('page', shape, 'walk-since'), () => pageSql(shape, 'walk-since'), {
          raw: true,
        })
        .all(params) as unknown[][];
    },
  });
  return result.reached === undefined
    ? { values: result.rows, hasMore: result.hasMore }
    : { values: result.rows, hasMore: result.hasMore, reached: result.reached };
}

/**
 * The default budget of a request: sinceScanBudget when the order is the sort index's own (its
 * column, then id), so each entry passed is an index step; a quarter of it when a second column
 * orders the page, whose value SQLite reads from each entry's row.
 */
function scanBudget(request: PageRequest): number {
  const budget = sinceScanBudget(request.limit);
  const indexOrder =
    request.sort.length === 1 || (request.sort.length === 2 && request.sort[1]!.column === 'id');
  return indexOrder ? budget : Math.ceil(budget / 4);
}

function pageShape(
  table: PageTable,
  columns: readonly string[],
  request: PageRequest,
  hasPosition: boolean,
  hasBound: boolean,
): PageShape {
  return {
    table,
    columns,
    sort: request.sort,
    backward: request.direction === 'before',
    hasPosition,
    hasBound,
  };
}

function statementKey(kind: string, shape: PageShape, plan: PagePlan): string {
  const signature = shape.sort.map((key) => `${key.descending ? '-' : ''}${key.column}`).join(',');
  const direction = shape.backward ? 'before' : 'after';
  return `${kind}:${shape.table}:${columnsKey(shape.columns)}:${signature}:${direction}:${shape.hasPosition}:${shape.hasBound === true}:${plan}`;
}

function keyParams(prefix: string, position: KeysetPosition | undefined): Record<string, string | number> {
  const params: Record<string, string | number> = {};
  position?.forEach((value, index) => {
    params[`${prefix}${index}`] = value;
  });
  return params;
}

export function checkRequest(request: PageRequest): void {
  const last = request.sort[request.sort.length - 1];
  if (!last || last.column !== 'id') throw new Error('page sort must end with id');
  for (const key of request.sort) {
    if (!SORT_COLUMNS.includes(key.column)) throw new Error(`not a sort column: ${key.column}`);
  }
  if (!Number.isInteger(request.limit) || request.limit < 1) throw new Error('page limit must be >= 1');
  if (request.position && request.position.length !== request.sort.length) {
    throw new Error('keyset position must hold one value per sort key');
  }
  if (request.scanBudget !== undefined && (!Number.isInteger(request.scanBudget) || request.scanBudget < 1)) {
    throw new Error('page scan budget must be >= 1');
  }
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
