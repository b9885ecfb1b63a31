import { quoteIdent } from '../model/quote-ident.ts';
import type { SortKey } from './page.ts';
import { changedPlanMax } from './page-budget.ts';
import { changeIndex, type PagePlan } from './page-sql.ts';
import type { ReadHandle } from './read-handle.ts';
import type { PageTable } from './tables.ts';

/**
 * Which plan reads a page with a since (filter[updated_since], a sync token), from the size of
 * the answer (projections/README.md, "Pages with a since"; the plans are in page-sql.ts).
 *
 * Both plans are bounded (page-budget.ts). `changed` gathers the M rows changed at or after the
 * since from the change-time index and sorts them: the least work there is while M is small, and
 * it grows with M, so it is taken only below changedPlanMax (index steps for id, row reads for
 * the other sorts). From there `walk-since` walks the sort's index, which carries each row's
 * change time, keeping the entries that match and passing the others without reading their rows,
 * for at most a budget of entries a page: a page of limit rows while at least one entry in 64
 * matches, wherever the matches lie, a shorter page (with where it stopped) below that.
 *
 * M is not counted in full: "at least T rows match" steps over at most T entries of the
 * change-time index (index-only, the cheapest step there is), so deciding costs min(M, T) steps.
 * A since at or before the oldest change time (every row matches) is found with one lookup.
 * The plan never changes the rows of a page, only what reading them costs.
 */
export function chooseSincePlan(
  handle: ReadHandle,
  table: PageTable,
  sort: readonly SortKey[],
  limit: number,
  sinceUs: number,
): Exclude<PagePlan, 'walk'> {
  const name = quoteIdent(table);
  const oldest = handle
    .statement(
      `since-oldest:${table}`,
      () => `SELECT min("_changed_us") FROM ${name} INDEXED BY ${changeIndex(table)}`,
    )
    .pluck()
    .get() as number | null;
  if (oldest === null || sinceUs <= oldest) return 'walk-since';
  const max = changedPlanMax(limit, sort[0]?.column === 'id');
  return matchesAtLeast(handle, table, sinceUs, max) ? 'walk-since' : 'changed';
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
