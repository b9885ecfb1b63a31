/**
 * How much one page may read, whatever the data looks like (docs/architecture.md, "Serving
 * requests": bounded work per request). A page with a since walks its sort's index and keeps the
 * entries that changed at or after the since; where those are rare, or gather at the far end of
 * the order, the walk would pass most of the company before it fills a page. Instead it stops at a budget of index entries
 * and hands back where it stopped: the page may hold fewer rows than `limit`, even none, while
 * more may follow (`Page.reached`), as DynamoDB's Query stops at 1 MB with a LastEvaluatedKey.
 *
 * The figures, in units of the rows a page wants (k = limit + 1), from what each step costs on a
 * 1,000,000-site file (bench/results/api-since-2026-12-01.md): serving one row of a page over HTTP
 * costs ~20 µs; one entry of a sort index that carries the change time (migration 006), checked
 * and passed without reading its row, ~0.1 µs; one row read by rowid, ~1 µs.
 */

/**
 * Entries of the sort index a since page may pass: 64 per row wanted plus 1,024. A full budget
 * costs about a third of what serving the page costs, so a page stays within ~1.5x an unfiltered
 * one however its rows lie; and a page fills before the budget runs out wherever at least one
 * entry in 64 matches (1.6 %), so the walk's requests grow only for sparser answers, whose
 * `changed` plan (below) does not take.
 */
export function sinceScanBudget(limit: number): number {
  return 64 * (limit + 1) + 1024;
}

/**
 * The most changed rows the `changed` plan gathers and sorts (since-plan.ts). Sorted by id it
 * reads only the change-time index (an index step each): as many as the scan budget. Sorted by
 * another column it reads each one's row for the sort key: a row costs ~10 index steps, so a
 * tenth of it.
 */
export function changedPlanMax(limit: number, sortedById: boolean): number {
  const budget = sinceScanBudget(limit);
  return sortedById ? budget : Math.ceil(budget / 10);
}

/**
 * The first stretch of a budgeted walk, in entries: enough for a page whose rows match one entry
 * in eight, so a dense answer costs one stretch. Each further stretch doubles, up to the budget.
 */
export function firstStretch(limit: number, budget: number): number {
  return Math.min(budget, 8 * (limit + 1));
}
