/**
 * A scan of an index in the order of a page, which keeps the entries that match a filter and stops
 * at a budget of entries passed (page-budget.ts): the shared loop of the since pages
 * (planned-page.ts) and the deletions feed (deletions.ts).
 *
 * It goes in stretches. Each first finds the entry where it ends, `skip` entries on (`boundary`:
 * index steps only, no filter, no row), then takes the matching entries up to and including it
 * (`matches`: a range between two keys, rows read for matches only). Stretches double from
 * `firstStretch` until `want` entries matched, the index ended, or the entries passed reached the
 * budget: then the scan hands back what it found and `reached`, the last entry passed, from
 * where the next page continues.
 */
export interface BudgetedScan<Position, Row> {
  readonly budget: number;
  readonly firstStretch: number;
  /** Matching entries wanted (a page's limit + 1: the extra one says more follow). */
  readonly want: number;
  /** Where the scan starts (exclusive); undefined: the start of the order. */
  readonly from: Position | undefined;
  /** The entry `skip` entries after `from`, undefined when the order ends before it. */
  boundary(from: Position | undefined, skip: number): Position | undefined;
  /** Up to `count` matching entries after `from`, up to and including `bound` (none: to the end). */
  matches(from: Position | undefined, bound: Position | undefined, count: number): Row[];
}

export interface ScanResult<Position, Row> {
  /** At most `want - 1` entries when `hasMore`; in the order of the scan. */
  readonly rows: Row[];
  readonly hasMore: boolean;
  /** Set when the budget ran out before `want` matched. */
  readonly reached?: Position;
}

export function budgetedScan<Position, Row>(scan: BudgetedScan<Position, Row>): ScanResult<Position, Row> {
  const rows: Row[] = [];
  let from = scan.from;
  let passed = 0;
  let stretch = Math.max(1, Math.min(scan.firstStretch, scan.budget));
  for (;;) {
    const bound = scan.boundary(from, stretch - 1);
    for (const row of scan.matches(from, bound, scan.want - rows.length)) rows.push(row);
    passed += stretch;
    if (rows.length >= scan.want) {
      rows.length = scan.want - 1;
      return { rows, hasMore: true };
    }
    if (bound === undefined) return { rows, hasMore: false };
    if (passed >= scan.budget) return { rows, hasMore: true, reached: bound };
    from = bound;
    stretch = Math.min(stretch * 2, scan.budget - passed);
  }
}
