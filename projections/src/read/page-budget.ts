/**
 * How much one page may read, whatever the data looks like (docs/architecture.md, "Serving
 * requests": bounded work per request). A page with a since walks its sort's index and keeps the
 * entries that changed at or after the since; where those are rare, or gather at the far end of
 * the order, the walk would pass most of the company before it fills a page. Instead it stops at a budget of index entries
 * and hands back where it stopped: the page may hold fewer rows than `limit`, even none, while
 * more may follow (`Page.reached`), as DynamoDB's Query stops at 1 MB with a LastEvaluatedKey.
 *
 * The figures, in units of the rows a page wants (k = limit + 1), from what each step costs on a
 * 1,000,000-site file (bench/results/api-since-2026-12-01.md): an entry of a sort index that
 * carries the change time (migration 006), checked and passed without reading its row, ~0.1-0.2 µs
 * read again, ~0.2-0.4 µs in a walk; one row read by rowid for its sort key, ~1 µs; serving a
 * page of 50 over HTTP, ~1.5-3 ms.
 */

/**
 * Entries of the sort index a since page may pass: 64 per row wanted plus 1,024. A full budget
 * (~1-1.5 ms for a page of 50) stays within what serving the page costs, so a page stays within
 * ~2x an unfiltered one over HTTP however its rows lie (measured 0.5-1.5x); and a page fills
 * before the budget runs out wherever at least one entry in 64 matches (1.6 %), so the walk's
 * requests grow only for sparser answers that the `changed` plan (below) does not take.
 */
export function sinceScanBudget(limit: number): number {
  return 64 * (limit + 1) + 1024;
}

/**
 * The most changed rows the `changed` plan gathers and sorts (since-plan.ts). Sorted by id it
 * reads only the change-time index (an index step each): as many as the scan budget. Sorted by
 * another column it reads each one's row for its sort key, which costs about four entries of a
 * walk: a quarter of it, so that either plan's page costs at most about a full budget. It gives
 * full pages where a walk would give short ones: below it a sparse answer (0.1 % of 1,000,000
 * sites, pages of 50) is 20 pages, not the 234 mostly empty ones of a walk.
 */
export function changedPlanMax(limit: number, sortedById: boolean): number {
  const budget = sinceScanBudget(limit);
  return sortedById ? budget : Math.ceil(budget / 4);
}

/**
 * The first stretch of a budgeted walk, in entries: enough for a page whose rows match one entry
 * in eight, so a dense answer costs one stretch. Each further stretch doubles, up to the budget.
 */
export function firstStretch(limit: number, budget: number): number {
  return Math.min(budget, 8 * (limit + 1));
}
