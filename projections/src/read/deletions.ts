import type { Page } from './page.ts';
import type { ReadHandle } from './read-handle.ts';
import type { PageTable } from './tables.ts';

/**
 * The deletions feed (GET /v1/deletions): a company file's tombstones of exported tables, in
 * change-time order, as keyset pages over the index (_changed_us, table_name, id) — never OFFSET.
 * Read it in the same snapshot as readTombstonesSince, so a prune committing in between cannot
 * make a page look complete when it is not.
 */

export interface Deletion {
  readonly table: PageTable;
  readonly id: string;
  /** Projection change time of the delete (µs since the epoch). */
  readonly changedUs: number;
}

/** The boundary tombstone of a page: its change time, table and id. */
export interface DeletionPosition {
  readonly changedUs: number;
  readonly table: string;
  readonly id: string;
}

export interface DeletionsRequest {
  /** Exported tables whose tombstones are wanted (at least one). */
  readonly tables: readonly PageTable[];
  /** Only tombstones whose change time is at or after this (µs). */
  readonly sinceUs: number;
  readonly limit: number;
  /** `after`: following `position` in feed order; `before`: preceding it (returned in feed order). */
  readonly direction: 'after' | 'before';
  readonly position?: DeletionPosition | undefined;
}

export function readDeletions(handle: ReadHandle, request: DeletionsRequest): Page<Deletion> {
  const count = request.tables.length;
  if (count === 0) throw new Error('deletions: at least one table');
  if (!Number.isInteger(request.limit) || request.limit < 1) throw new Error('page limit must be >= 1');
  const backward = request.direction === 'before';
  const hasPosition = request.position !== undefined;
  const statement = handle.statement(
    `deletions:${count}:${request.direction}:${hasPosition}`,
    () => deletionsSql(count, backward, hasPosition),
    { raw: true },
  );
  const params: Record<string, string | number> = { since: request.sinceUs, limit: request.limit + 1 };
  request.tables.forEach((table, index) => {
    params[`t${index}`] = table;
  });
  if (request.position) {
    params.pc = request.position.changedUs;
    params.pt = request.position.table;
    params.pi = request.position.id;
  }
  const values = statement.all(params) as [number, PageTable, string][];
  const hasMore = values.length > request.limit;
  if (hasMore) values.length = request.limit;
  const rows = values.map(([changedUs, table, id]): Deletion => ({ table, id, changedUs }));
  if (backward) rows.reverse();
  return { rows, hasMore };
}

/**
 * meta.tombstones_since_us: the change time from which this file's tombstones are complete
 * (projections/src/migrations/company/004-tombstone-retention.sql).
 */
export function readTombstonesSince(handle: ReadHandle): number {
  return handle
    .statement('meta:tombstones-since', () => 'SELECT tombstones_since_us FROM meta WHERE lock = 1')
    .pluck()
    .get() as number;
}

function deletionsSql(tables: number, backward: boolean, hasPosition: boolean): string {
  const names = Array.from({ length: tables }, (_, index) => `@t${index}`).join(', ');
  // Forward from a position, the position starts the index range and the since is only checked
  // (`+` keeps SQLite from starting at the since instead): the position comes from a page of the
  // same since, so it is at or after it.
  const since = hasPosition && !backward ? `+"_changed_us" >= @since` : `"_changed_us" >= @since`;
  const where = [since, `"table_name" IN (${names})`];
  if (hasPosition) {
    where.push(`("_changed_us", "table_name", "id") ${backward ? '<' : '>'} (@pc, @pt, @pi)`);
  }
  const direction = backward ? 'DESC' : 'ASC';
  // The change-time index, named: left to itself (no statistics) SQLite takes the primary key
  // (table_name, id) for the IN list and sorts every tombstone of those tables, whatever the since.
  return `SELECT "_changed_us", "table_name", "id" FROM "tombstones" INDEXED BY "tombstones_by_changed" WHERE ${where.join(' AND ')}
    ORDER BY "_changed_us" ${direction}, "table_name" ${direction}, "id" ${direction} LIMIT @limit`;
}
