import type { Page, PageRequest } from './page.ts';
import { type PagePlan, pageSql } from './page-sql.ts';
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
  const backward = request.direction === 'before';
  const hasPosition = request.position !== undefined;
  const signature = request.sort.map((key) => `${key.descending ? '-' : ''}${key.column}`).join(',');
  const statement = handle.statement(
    `page:${table}:${columnsKey(columns)}:${signature}:${request.direction}:${hasPosition}:${plan}`,
    () => pageSql({ table, columns, sort: request.sort, backward, hasPosition }, plan),
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
