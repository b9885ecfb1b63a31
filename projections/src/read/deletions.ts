import { budgetedScan } from './budgeted-scan.ts';
import { firstStretch, sinceScanBudget } from './page-budget.ts';
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
  /** Tombstones the page may pass (page-budget.ts; default from the limit). Tests set small ones. */
  readonly scanBudget?: number | undefined;
}

/**
 * A page of the feed. Tombstones of tables not asked for (another filter[type], the contacts a
 * site embeds) are passed over, at most a budget of them (page-budget.ts): when it runs out the
 * page is short, even empty, with `reached`, the last tombstone passed, to continue from.
 */
export interface DeletionsPage {
  /** In feed order, whatever the direction. */
  readonly rows: Deletion[];
  readonly hasMore: boolean;
  readonly reached?: DeletionPosition;
}

export function readDeletions(handle: ReadHandle, request: DeletionsRequest): DeletionsPage {
  const count = request.tables.length;
  if (count === 0) throw new Error('deletions: at least one table');
  if (!Number.isInteger(request.limit) || request.limit < 1) throw new Error('page limit must be >= 1');
  const backward = request.direction === 'before';
  const budget = request.scanBudget ?? sinceScanBudget(request.limit);
  const tables: Record<string, string> = {};
  request.tables.forEach((table, index) => {
    tables[`t${index}`] = table;
  });
  const result = budgetedScan<DeletionPosition, [number, PageTable, string]>({
    budget,
    firstStretch: firstStretch(request.limit, budget),
    want: request.limit + 1,
    from: request.position,
    boundary: (from, skip) => {
      const end = handle
        .statement(
          `deletions-stretch-end:${request.direction}:${from !== undefined}`,
          () => stretchEndSql({ backward, hasPosition: from !== undefined, since: true }),
          { raw: true },
        )
        .get({ since: request.sinceUs, skip, ...positionParams('p', from) }) as
        | [number, string, string]
        | undefined;
      return end && { changedUs: end[0], table: end[1], id: end[2] };
    },
    matches: (from, bound, limit) =>
      handle
        .statement(
          `deletions:${count}:${request.direction}:${from !== undefined}:${bound !== undefined}`,
          () => deletionsSql(count, backward, from !== undefined, bound !== undefined),
          { raw: true },
        )
        .all({
          since: request.sinceUs,
          limit,
          ...tables,
          ...positionParams('p', from),
          ...positionParams('b', bound),
        }) as [number, PageTable, string][],
  });
  const rows = result.rows.map(([changedUs, table, id]): Deletion => ({ table, id, changedUs }));
  if (backward) rows.reverse();
  return result.reached === undefined
    ? { rows, hasMore: result.hasMore }
    : { rows, hasMore: result.hasMore, reached: result.reached };
}

function positionParams(
  prefix: string,
  position: DeletionPosition | undefined,
): Record<string, string | number> {
  return position === undefined
    ? {}
    : { [`${prefix}c`]: position.changedUs, [`${prefix}t`]: position.table, [`${prefix}i`]: position.id };
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

/** The SQL of a stretch of the feed's scan (exported for the plan tests). */
export function deletionsSql(
  tables: number,
  backward: boolean,
  hasPosition: boolean,
  hasBound: boolean,
): string {
  const names = Array.from({ length: tables }, (_, index) => `@t${index}`).join(', ');
  // Forward from a position, the position starts the index range, and backward to a bound, the
  // bound ends it; the since is then only checked (`+` keeps SQLite from taking it for that end
  // instead): positions and bounds come from pages of the same since, so they are at or after it.
  const checkedOnly = (hasPosition && !backward) || (hasBound && backward);
  const since = checkedOnly ? `+"_changed_us" >= @since` : `"_changed_us" >= @since`;
  const where = [since, `"table_name" IN (${names})`];
  if (hasPosition) {
    where.push(`("_changed_us", "table_name", "id") ${backward ? '<' : '>'} (@pc, @pt, @pi)`);
  }
  if (hasBound) where.push(`("_changed_us", "table_name", "id") ${backward ? '>=' : '<='} (@bc, @bt, @bi)`);
  const direction = backward ? 'DESC' : 'ASC';
  // The change-time index, named: left to itself (no statistics) SQLite takes the primary key
  // (table_name, id) for the IN list and sorts every tombstone of those tables, whatever the since.
  return `SELECT "_changed_us", "table_name", "id" FROM "tombstones" INDEXED BY "tombstones_by_changed" WHERE ${where.join(' AND ')}
    ORDER BY "_changed_us" ${direction}, "table_name" ${direction}, "id" ${direction} LIMIT @limit`;
}

/** Which stretch-end statement: the scan's direction, whether it starts at a position, and whether it has a since. */
export interface StretchEnd {
  readonly backward: boolean;
  readonly hasPosition: boolean;
  /** `@since` bounds it (the deletions feed); the change feed's tombstones have none. */
  readonly since: boolean;
}

/**
 * Where a stretch of a tombstones scan ends: `@skip` tombstones on from the position, of any table
 * — of the deletions feed (from `@since`) and of the change feed's tombstones (no since, always
 * from a position). Exported for the plan tests.
 */
export function stretchEndSql({ backward, hasPosition, since }: StretchEnd): string {
  const where: string[] = [];
  if (since) where.push(hasPosition && !backward ? `+"_changed_us" >= @since` : `"_changed_us" >= @since`);
  if (hasPosition) where.push(`("_changed_us", "table_name", "id") ${backward ? '<' : '>'} (@pc, @pt, @pi)`);
  const direction = backward ? 'DESC' : 'ASC';
  return `SELECT "_changed_us", "table_name", "id" FROM "tombstones" INDEXED BY "tombstones_by_changed"${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}
    ORDER BY "_changed_us" ${direction}, "table_name" ${direction}, "id" ${direction} LIMIT 1 OFFSET @skip`;
}
