import { quoteIdent } from '../model/quote-ident.ts';
import type { SortKey } from './page.ts';
import { changeIndex, type PagePlan } from './page-sql.ts';
import type { ReadHandle } from './read-handle.ts';
import type { PageTable } from './tables.ts';

/**
 * Which plan reads a page with a since (filter[updated_since]), from the size of the answer
 * (projections/README.md, "Pages with a since"; the plans are in page-sql.ts).
 *
 * A page wants k = limit + 1 rows of a table of N rows, M of which changed at or after the since.
 * Unit costs: s, reading a row by rowid (a table B-tree search; the dominant cost once the file is
 * larger than the page cache); i, one step of an index-only scan; b, one rowid put into a
 * temporary set (a step plus an insert). Matching rows spread over the sort order at density M/N:
 *
 *   walk-since  k·N/M steps of the sort index, each reading its row:    k·N/M · s
 *   walk-set    the M rowids into a set, then k·N/M index-only steps:   M · b + k·N/M · i
 *   changed     the M rows' sort keys, then sort them:                  M · s  (M · i for id:
 *               the change-time index (_changed_us, id) holds the key, no row is read)
 *
 * With r = √(k·N) the crossovers are near M = r·√(s/i) (sorted by id: changed → walk-since),
 * r·√(i/s) (changed → walk-set) and r·√(s/b) (walk-set → walk-since). The ratios depend on where
 * rows come from (SQLite's page cache, the OS's) and on whether the sort order follows the rows'
 * physical order (then a walk reads neighbouring rows, and s is small). The thresholds are the
 * crossovers measured by bench/api-since.ts on a 1M-row file with rows from the OS's cache, as a
 * partner's walk reads them, rounded: 6r for id, r/3 and, for the walk, 2r, between the crossover
 * on an order independent of the physical one (name) and on one that follows it (created_at), so
 * near the better plan either way (the crossovers and each plan's cost:
 * bench/results/api-since-2026-11-27.md; bench/README.md, "since-pages"). The
 * extremes (no row, a few rows, every row) cost about what an unfiltered page costs. The model
 * assumes the changed rows spread over the sort order; where they cluster at its far end (sorted
 * by created_at or updated_at, the newest rows changed), a walk passes every unchanged row first:
 * that worst case is measured there too.
 *
 * M is not counted in full: "at least T rows match" steps over at most T entries of the
 * change-time index (index-only, the cheapest step there is), so deciding costs min(M, T)·i. A
 * since at or before the oldest change time (every row matches) is found with one lookup.
 * The plan never changes the rows of a page, only what reading them costs.
 */

/** Thresholds in units of √(k·N) (see above). */
const ID_CHANGED_BELOW = 6;
const SET_FROM = 1 / 3;
const WALK_FROM = 2;

/** The counts of matching rows at which the plan changes, for a page of `limit` over `rows` rows. */
export function sinceThresholds(limit: number, rows: number) {
  const root = Math.sqrt((limit + 1) * rows);
  return {
    /** Sorted by id: `changed` below, `walk-since` from there. */
    idChangedBelow: Math.ceil(ID_CHANGED_BELOW * root),
    /** Other sorts: `changed` below, `walk-set` from there… */
    setFrom: Math.ceil(SET_FROM * root),
    /** …and `walk-since` from there. */
    walkFrom: Math.ceil(WALK_FROM * root),
  };
}

export function chooseSincePlan(
  handle: ReadHandle,
  table: PageTable,
  sort: readonly SortKey[],
  limit: number,
  sinceUs: number,
): Exclude<PagePlan, 'walk'> {
  const name = quoteIdent(table);
  const index = changeIndex(table);
  // max(rowid) is one search: it counts deleted rows' rowids too, which only moves the thresholds up.
  const [rows, oldest] = handle
    .statement(
      `since-stats:${table}`,
      () =>
        `SELECT (SELECT max(rowid) FROM ${name}), (SELECT min("_changed_us") FROM ${name} INDEXED BY ${index})`,
      { raw: true },
    )
    .get() as [number | null, number | null];
  if (rows === null || oldest === null || sinceUs <= oldest) return 'walk-since';
  const at = sinceThresholds(limit, rows);
  const atLeast = (count: number) => matchesAtLeast(handle, table, sinceUs, count);
  if (sort[0]?.column === 'id') return atLeast(at.idChangedBelow) ? 'walk-since' : 'changed';
  if (atLeast(at.walkFrom)) return 'walk-since';
  return atLeast(at.setFrom) ? 'walk-set' : 'changed';
}

/** Whether at least `count` (≥ 1) rows changed at or after `sinceUs`: steps over at most `count` index entries. */
export function matchesAtLeast(
  handle: ReadHandle,
  table: PageTable,
  sinceUs: number,
  count: number,
): boolean {
  const statement = handle.statement(
    `since-at-least:${table}`,
    () =>
      `SELECT 1 FROM ${quoteIdent(table)} INDEXED BY ${changeIndex(table)} WHERE "_changed_us" >= @since ORDER BY "_changed_us" LIMIT 1 OFFSET @skip`,
  );
  return statement.get({ since: sinceUs, skip: Math.max(0, count - 1) }) !== undefined;
}
