/**
 * The readPage-level half of bench/api/since.ts: µs per page (median of many, in a read snapshot
 * as the api reads) with a since, against the unfiltered page of the same sort and depth (the
 * peer), on one company file, in this process. A bench reads through one side's code: this
 * checkout's @pda/projections/read, or another checkout's (the "before" code, on a file that code
 * built: loadReadSide).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { quoteIdent } from '@pda/projections/model';
import * as thisSide from '@pda/projections/read';
import {
  chooseSincePlan,
  type Deletion,
  type KeysetPosition,
  type PagePlan,
  type PageTable,
  readDeletions,
  readPlannedPage,
  type SortKey,
} from '@pda/projections/read';
import { readDeletionsBefore } from './since-before.ts';

/** What a bench needs of a checkout's read code (the before side's may lack newer fields). */
export type ReadSide = Pick<
  typeof thisSide,
  'openCompanyReader' | 'ReadHandle' | 'readPage' | 'chooseSincePlan'
>;

/** This checkout's read code, or that of the checkout at `repo` (its own node_modules, its own SQLite). */
export async function loadReadSide(repo?: string): Promise<ReadSide> {
  if (repo === undefined) return thisSide;
  return (await import(pathToFileURL(join(repo, 'projections', 'src', 'read', 'index.ts')).href)) as ReadSide;
}

export interface SortCase {
  readonly label: string;
  readonly keys: readonly SortKey[];
}

/** Every sort the api allows on one field (the id tie-break follows its direction). */
export const SORTS: readonly SortCase[] = (['id', 'name', 'created_at', 'updated_at'] as const).flatMap(
  (column) =>
    [false, true].map((descending) => ({
      label: `${descending ? '-' : ''}${column}`,
      keys:
        column === 'id'
          ? [{ column, descending }]
          : [
              { column, descending },
              { column: 'id' as const, descending },
            ],
    })),
);

/** One side's page: what readPage answered and what it cost beside its unfiltered peer. */
export interface SidePage {
  readonly plan: PagePlan;
  /** Rows on the page (at most the limit). */
  readonly rows: number;
  /** The page stopped at its scan budget before it was full (Page.reached is set). */
  readonly short: boolean;
  readonly unfilteredUs: number;
  readonly us: number;
}

export interface PageRow {
  readonly file: string;
  readonly sort: string;
  /** Sites matching the since. */
  readonly matching: number;
  readonly page: 'first' | 'deep';
  /** This checkout's code on the file it built. */
  readonly after: SidePage;
  /** The --before-repo checkout's code on the file it built. */
  readonly before: SidePage | undefined;
}

export interface Timing {
  /** Stop after this many calls… */
  readonly maxCalls: number;
  /** …or this long, once `minCalls` ran. */
  readonly budgetMs: number;
  readonly minCalls: number;
}

/**
 * Median µs of each of `fns`, their calls interleaved (one of each per round) so that a change of
 * the machine's load between them hits them all alike. One warm-up call each; a function whose
 * warm-up took over 250 ms gets 2 more calls, the others `minCalls` and then as many rounds as
 * `budgetMs` of their own time (or `maxCalls`) allows.
 */
export function medians(fns: readonly (() => void)[], timing: Timing): number[] {
  const slow = fns.map((fn) => {
    const at = performance.now();
    fn();
    return performance.now() - at > 250;
  });
  const times = fns.map((): number[] => []);
  let spent = 0;
  for (let round = 0; ; round++) {
    const fastRoundsDone = round >= timing.minCalls && (round >= timing.maxCalls || spent >= timing.budgetMs);
    if (fastRoundsDone && round >= 2) break;
    fns.forEach((fn, index) => {
      if (slow[index] ? round >= 2 : fastRoundsDone) return;
      const at = performance.now();
      fn();
      const took = performance.now() - at;
      times[index]!.push(took);
      if (!slow[index]) spent += took;
    });
  }
  return times.map((list) => {
    list.sort((a, b) => a - b);
    return Math.round(list[Math.floor(list.length / 2)]! * 1000);
  });
}

export function medianUs(fn: () => void, timing: Timing): number {
  return medians([fn], timing)[0]!;
}

/** Positions a "deep" page is read from, in turn. */
const POSITIONS = 64;

export class PageBench {
  readonly file: string;
  readonly timing: Timing;
  readonly side: ReadSide;
  readonly handle: InstanceType<ReadSide['ReadHandle']>;
  readonly #rows: number;
  readonly #times: number[];
  readonly #columns = new Map<string, readonly string[]>();

  constructor(file: string, dataDir: string, companyId: string, timing: Timing, side: ReadSide = thisSide) {
    this.file = file;
    this.timing = timing;
    this.side = side;
    this.handle = new side.ReadHandle(side.openCompanyReader(dataDir, companyId));
    this.#times = this.handle.db
      .prepare('SELECT _changed_us FROM sites INDEXED BY sites_by_changed ORDER BY _changed_us')
      .pluck()
      .all() as number[];
    this.#rows = this.#times.length;
  }

  get rows(): number {
    return this.#rows;
  }

  /** The since that matches exactly `count` sites (change times are distinct per file). */
  sinceMatching(count: number): number {
    return count === 0 ? this.#times.at(-1)! + 1 : this.#times[this.#rows - count]!;
  }

  /** How many sites changed at or after `sinceUs`. */
  matchingSince(sinceUs: number): number {
    let low = 0;
    let high = this.#rows;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#times[middle]! < sinceUs) low = middle + 1;
      else high = middle;
    }
    return this.#rows - low;
  }

  /** What the api selects for a sites page of this sort (resource.pageColumns): a stable array. */
  columns(sort: SortCase): readonly string[] {
    let columns = this.#columns.get(sort.label);
    if (!columns) {
      columns = [...new Set(['_json', 'id', ...sort.keys.map((key) => key.column)])];
      this.#columns.set(sort.label, columns);
    }
    return columns;
  }

  /**
   * Sort keys of `count` rows spread evenly over the middle 80 % of the (filtered) order: pages
   * after them are "deep", and taking them in turn reads other rows on every call, as a partner's
   * walk does (a page read again and again would run from the CPU's caches).
   */
  positions(sort: SortCase, sinceUs: number | undefined, count = POSITIONS): string[][] {
    const keys = sort.keys.map((key) => quoteIdent(key.column));
    const order = sort.keys.map((key) => `${quoteIdent(key.column)} ${key.descending ? 'DESC' : 'ASC'}`);
    const first = sort.keys[0]!.column;
    const index = first === 'id' ? 'sqlite_autoindex_sites_1' : `sites_by_${first}`;
    const all = sinceUs === undefined || sinceUs <= this.#times[0]!;
    const sql = all
      ? `SELECT ${keys} FROM sites INDEXED BY ${index} ORDER BY ${order}`
      : `SELECT ${keys} FROM sites INDEXED BY sites_by_changed WHERE _changed_us >= ? ORDER BY ${order}`;
    const statement = this.handle.db.prepare(sql).raw(true);
    const rows = (all ? statement.all() : statement.all(sinceUs)) as unknown[][];
    return Array.from({ length: count }, (_, index) =>
      rows[Math.floor(rows.length * (0.1 + (0.8 * index) / count))]!.map(String),
    );
  }

  /** One page through this side's readPage, in a read snapshot as the api reads. */
  read(
    sort: SortCase,
    limit: number,
    changedSinceUs: number | undefined,
    position: KeysetPosition | undefined,
  ): { rows: Record<string, unknown>[]; hasMore: boolean; reached?: KeysetPosition } {
    const request = { sort: sort.keys, limit, direction: 'after' as const, position, changedSinceUs };
    return this.handle.snapshot(() => this.side.readPage(this.handle, 'sites', request, this.columns(sort)));
  }

  /** µs of one 50-row page with a since matching `matching` sites, and its unfiltered peer's, called in turn. */
  measure(sort: SortCase, matching: number, page: 'first' | 'deep'): SidePage {
    const since = this.sinceMatching(matching);
    const positions = page === 'deep' ? this.positions(sort, since) : [undefined];
    const peerPositions = page === 'deep' ? this.#peerPositions(sort) : [undefined];
    let turn = 0;
    const next = <T>(list: readonly T[]) => list[turn++ % list.length]!;
    const probe = this.read(sort, 50, since, positions[0]);
    // The page and its peer in turn (alike footprints).
    const [unfilteredUs, us] = medians(
      [
        () => this.read(sort, 50, undefined, next(peerPositions)),
        () => this.read(sort, 50, since, next(positions)),
      ],
      this.timing,
    );
    return {
      plan: this.side.chooseSincePlan(this.handle, 'sites', sort.keys, 50, since),
      rows: probe.rows.length,
      short: probe.reached !== undefined,
      unfilteredUs: unfilteredUs!,
      us: us!,
    };
  }

  /** µs of an unfiltered deep page of `limit` rows (the positions of #peerPositions in turn). */
  unfilteredUs(sort: SortCase, limit: number): number {
    const positions = this.#peerPositions(sort);
    let turn = 0;
    return medianUs(
      () => this.read(sort, limit, undefined, positions[turn++ % positions.length]),
      this.timing,
    );
  }

  readonly #peers = new Map<string, string[][]>();
  #peerPositions(sort: SortCase): string[][] {
    let positions = this.#peers.get(sort.label);
    if (!positions) {
      positions = this.positions(sort, undefined);
      this.#peers.set(sort.label, positions);
    }
    return positions;
  }

  close(): void {
    this.handle.close();
  }
}

export interface DeletionsRow {
  readonly matching: number;
  readonly page: 'first' | 'deep';
  readonly rows: number;
  readonly afterUs: number;
  readonly beforeUs: number;
}

/** The deletions feed of the api's five resource tables, the sites' tombstones matching `matching`. */
export function measureDeletions(bench: PageBench, matching: number, page: 'first' | 'deep'): DeletionsRow {
  const { handle } = bench;
  const tables: PageTable[] = ['sites', 'services', 'equipment_categories', 'equipment', 'consumables'];
  const sites = handle.db
    .prepare(`SELECT _changed_us FROM tombstones WHERE table_name = 'sites' ORDER BY _changed_us`)
    .pluck()
    .all() as number[];
  const since = matching === 0 ? sites.at(-1)! + 1 : sites[sites.length - matching]!;
  const at =
    page === 'deep'
      ? (handle.db
          .prepare(
            `SELECT table_name AS "table", id, _changed_us AS changedUs FROM tombstones INDEXED BY tombstones_by_changed
             WHERE _changed_us >= ? AND table_name = 'sites' ORDER BY _changed_us LIMIT 1 OFFSET ?`,
          )
          .get(since, Math.floor(matching / 2) - 1) as Deletion)
      : undefined;
  const position = at && { changedUs: at.changedUs, table: at.table, id: at.id };
  const read = () =>
    handle.snapshot(
      () =>
        readDeletions(handle, { tables, sinceUs: since, limit: 50, direction: 'after', position }).rows
          .length,
    );
  const afterUs = medianUs(read, bench.timing);
  const beforeUs = medianUs(
    () => handle.snapshot(() => readDeletionsBefore(handle, tables, since, 50, position)),
    bench.timing,
  );
  return { matching, page, rows: read(), afterUs, beforeUs };
}

export interface CrossoverRow {
  readonly sort: string;
  readonly matching: number;
  readonly chosen: PagePlan;
  /** µs of a deep page with each plan forced. */
  readonly plans: Partial<Record<PagePlan, number>>;
  /** Rows on a walk-since page, averaged over the positions (a budgeted page may be short). */
  readonly walkSinceRows: number;
}

/**
 * Deep pages (the positions of PageBench.positions, in turn) with each plan forced, at answers
 * around the threshold of projections/src/read/since-plan.ts (changedPlanMax): where the plans cross.
 */
export function measureCrossovers(
  bench: PageBench,
  sort: SortCase,
  matchings: readonly number[],
): CrossoverRow[] {
  const { handle } = bench;
  const plans: PagePlan[] = ['changed', 'walk-since'];
  return matchings.map((matching) => {
    const since = bench.sinceMatching(matching);
    const positions = bench.positions(sort, since);
    let turn = 0;
    const page = (plan: PagePlan, position: readonly string[] | undefined) =>
      handle.snapshot(() =>
        readPlannedPage(
          handle,
          'sites',
          { sort: sort.keys, limit: 50, direction: 'after', position, changedSinceUs: since },
          bench.columns(sort),
          plan,
        ),
      );
    const read = (plan: PagePlan) => () => page(plan, positions[turn++ % positions.length]);
    const walkSinceRows =
      positions.reduce((sum, position) => sum + page('walk-since', position).rows.length, 0) /
      positions.length;
    // One plan after the other: their footprints differ by orders of magnitude (in turn, the
    // largest would sweep the others' rows out of the caches).
    const costs: Partial<Record<PagePlan, number>> = {};
    for (const plan of plans) costs[plan] = medianUs(read(plan), bench.timing);
    return {
      sort: sort.label,
      matching,
      chosen: chooseSincePlan(handle, 'sites', sort.keys, 50, since),
      plans: costs,
      walkSinceRows: Math.round(walkSinceRows * 10) / 10,
    };
  });
}
