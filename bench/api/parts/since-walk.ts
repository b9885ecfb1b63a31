/**
 * The whole-walk half of bench/api/since.ts: every page of a since answer, followed the way a
 * partner follows links.next (the next page starts after Page.reached when a page stopped at its
 * budget, else after its last row), each page timed in its own read snapshot. What a partner's
 * sync costs in total, and its slowest page, beside one unfiltered page of the same sort and limit.
 */
import type { KeysetPosition } from '@pda/projections/read';
import type { PageBench, SortCase } from './since-pages.ts';

export interface WalkStats {
  readonly pages: number;
  /** Pages with fewer rows than the limit that still had more (stopped at their budget). */
  readonly short: number;
  /** Rows the walk gave: the answer's size when the walk is right. */
  readonly rows: number;
  readonly totalUs: number;
  readonly medianPageUs: number;
  readonly maxPageUs: number;
}

export interface WalkRow {
  readonly file: string;
  readonly sort: string;
  readonly matching: number;
  readonly limit: number;
  readonly after: WalkStats;
  /** µs of one unfiltered deep page of the same sort and limit, this side's code and file. */
  readonly afterUnfilteredUs: number;
  readonly before: WalkStats | undefined;
  readonly beforeUnfilteredUs: number | undefined;
}

/** One walk of the answer of `sinceUs`, from the first page to the last. */
export function walkAll(bench: PageBench, sort: SortCase, sinceUs: number, limit: number): WalkStats {
  const keys = sort.keys.map((key) => key.column);
  let position: KeysetPosition | undefined;
  let pages = 0;
  let short = 0;
  let rows = 0;
  const pageUs: number[] = [];
  for (;;) {
    const at = performance.now();
    const page = bench.read(sort, limit, sinceUs, position);
    const us = (performance.now() - at) * 1000;
    pages += 1;
    rows += page.rows.length;
    pageUs.push(us);
    if (!page.hasMore) break;
    if (page.rows.length < limit) short += 1;
    const last = page.rows.at(-1);
    position = page.reached ?? (last && keys.map((key) => String(last[key])));
    if (position === undefined)
      throw new Error(`${sort.label}: a page with more and no position to go on from`);
  }
  const totalUs = pageUs.reduce((sum, us) => sum + us, 0);
  pageUs.sort((a, b) => a - b);
  return {
    pages,
    short,
    rows,
    totalUs: Math.round(totalUs),
    medianPageUs: Math.round(pageUs[Math.floor(pageUs.length / 2)]!),
    maxPageUs: Math.round(pageUs.at(-1)!),
  };
}

/**
 * Each side's cheapest of `repeats` walks, the sides' walks in turn (the machine is shared: the
 * others met more load, and in turn a change of load hits both sides alike).
 */
export function bestWalks(
  benches: readonly PageBench[],
  sort: SortCase,
  matching: number,
  limit: number,
  repeats: number,
): WalkStats[] {
  const best: (WalkStats | undefined)[] = benches.map(() => undefined);
  for (let i = 0; i < repeats; i++) {
    benches.forEach((bench, index) => {
      const walk = walkAll(bench, sort, bench.sinceMatching(matching), limit);
      if (best[index] === undefined || walk.totalUs < best[index].totalUs) best[index] = walk;
    });
  }
  return best as WalkStats[];
}
