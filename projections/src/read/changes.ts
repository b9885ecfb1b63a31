import { quoteIdent } from '../model/quote-ident.ts';
import { budgetedScan } from './budgeted-scan.ts';
import { stretchEndSql } from './deletions.ts';
import { firstStretch, sinceScanBudget } from './page-budget.ts';
import { changeIndex } from './page-sql.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import type { PageTable } from './tables.ts';

/**
 * The change feed (GET /v1/changes): the rows and tombstones of several exported tables as one
 * sequence ordered by (change time, table, id), read as keyset pages after a position. Each table
 * is a range of its change-time index `(_changed_us, id)` and the tombstones a range of
 * `tombstones_by_changed`, each read index-only with LIMIT n + 1 and merged here: a page costs
 * (tables + 1) · (n + 1) index steps whatever the size of the file, never a scan or a sort of
 * what changed. Only keys are read; the caller reads the documents of the n winners in the same
 * snapshot (ReadHandle.snapshot) with readChangedRows: one range walk per table on the page.
 * The api reads its pages by readChangesWithRows (changes-rows.ts: the rows with their documents in
 * one statement), which comes here for a page whose limit + 1 rows end inside one change time.
 *
 * Table names of the exported tables sort like their resource types (consumables, equipment,
 * equipment_categories, services, sites), so the order is (change time, type, id) as well. A row
 * and a tombstone of one id never coexist (an upsert removes the tombstone), and every change has
 * its own change time (the writer's +1 rule), so the position is total.
 */

export interface ChangePosition {
  readonly changedUs: number;
  /** '' = before every table at this change time. */
  readonly table: string;
  /** '' = before every id of `table` at this change time. */
  readonly id: string;
}

/** The start of the feed: before every change. */
export const FEED_START: ChangePosition = { changedUs: 0, table: '', id: '' };

export interface ChangeKey {
  readonly op: 'upsert' | 'delete';
  readonly table: PageTable;
  readonly id: string;
  readonly changedUs: number;
}

export interface ChangesRequest {
  /** Exported tables (at least one). */
  readonly tables: readonly PageTable[];
  /** Changes strictly after this position. */
  readonly after: ChangePosition;
  readonly limit: number;
  /** Tombstones a page may pass (page-budget.ts; default from the limit). Tests set small ones. */
  readonly scanBudget?: number | undefined;
}

export interface ChangesPage {
  readonly rows: ChangeKey[];
  readonly hasMore: boolean;
  /**
   * Set when the page stopped short at its budget of tombstones (readTombstones): the last one it
   * passed. No change at or before it was left out, so the next page starts after it.
   */
  readonly reached?: ChangePosition;
}

export function readChanges(handle: ReadHandle, request: ChangesRequest): ChangesPage {
  const { tables, after, limit } = request;
  if (tables.length === 0) throw new Error('changes: at least one table');
  if (!Number.isInteger(limit) || limit < 1) throw new Error('page limit must be >= 1');
  const take = limit + 1;
  const ranges: [number, string][][] = [];
  for (const table of tables) {
    const later = table >= after.table;
    const statement = handle.statement(`changes:rows:${table}:${later}`, () => changedRowsSql(table, later), {
      raw: true,
    });
    ranges.push(statement.all(rangeParams(table, later, after, take)) as [number, string][]);
  }
  const { tombstones, reached } = readTombstones(handle, request, take);

  // Merged here: each range is in feed order already, so the next change is the least of the
  // heads; a change object only for the page's rows.
  const heads = new Array<number>(tables.length).fill(0);
  let nextTombstone = 0;
  const rows: ChangeKey[] = [];
  while (rows.length < limit) {
    let best = -1;
    let bestUs = 0;
    let bestId = '';
    for (let index = 0; index < tables.length; index++) {
      const head = ranges[index]![heads[index]!];
      if (
        head !== undefined &&
        (best < 0 ||
          head[0] < bestUs ||
          (head[0] === bestUs &&
            (tables[index]! < tables[best]! || (tables[index] === tables[best] && head[1] < bestId))))
      ) {
        best = index;
        bestUs = head[0];
        bestId = head[1];
      }
    }
    // A row and a tombstone of one id never coexist; were they to, the row comes first.
    const tombstone = tombstones[nextTombstone];
    if (
      tombstone !== undefined &&
      (best < 0 ||
        tombstone[0] < bestUs ||
        (tombstone[0] === bestUs &&
          (tombstone[1] < tables[best]! || (tombstone[1] === tables[best] && tombstone[2] < bestId))))
    ) {
      rows.push({ op: 'delete', table: tombstone[1], id: tombstone[2], changedUs: tombstone[0] });
      nextTombstone++;
    } else if (best >= 0) {
      const upsert: ChangeKey = { op: 'upsert', table: tables[best]!, id: bestId, changedUs: bestUs };
      if (pastTombstonesRead(upsert, reached)) break;
      rows.push(upsert);
      heads[best]!++;
    } else {
      break;
    }
  }
  if (reached !== undefined && rows.length < limit) return { rows, hasMore: true, reached };
  // Each range read up to limit + 1: a head left over is a change after the page's last.
  const hasMore =
    nextTombstone < tombstones.length || ranges.some((range, index) => heads[index]! < range.length);
  return { rows, hasMore };
}

/**
 * The tombstones of `tables` after the position, in feed order, at most `take`: [change time,
 * table, id]. The index holds every table's tombstones (those of types not asked for, and of site
 * contacts, which no type exports), so it is read as a budgeted scan (budgeted-scan.ts): at most
 * a budget of tombstones passed, then `reached`, the last one passed, and the list is complete
 * only up to it.
 */
export function readTombstones(
  handle: ReadHandle,
  request: ChangesRequest,
  take: number,
): { tombstones: [number, PageTable, string][]; reached?: ChangePosition } {
  const { tables, after } = request;
  // At least two slots, the one table named twice: with `table_name IN (?)` SQLite reads it as an
  // equality and sorts each change time's tombstones by id in a temporary B-tree (EXPLAIN QUERY PLAN),
  // and the tombstones of one TRUNCATE share a change time.
  const slots = Math.max(2, tables.length);
  const names: Record<string, string> = {};
  for (let index = 0; index < slots; index++) names[`t${index}`] = tables[index] ?? tables[0]!;
  const budget = request.scanBudget ?? sinceScanBudget(request.limit);
  const result = budgetedScan<ChangePosition, [number, PageTable, string]>({
    budget,
    firstStretch: firstStretch(request.limit, budget),
    // One more than the merge needs: budgetedScan keeps all but the last of a full scan.
    want: take + 1,
    from: after,
    boundary: (from, skip) => {
      const end = handle
        .statement(
          'changes:tombstones-stretch-end',
          () => stretchEndSql({ backward: false, hasPosition: true, since: false }),
          { raw: true },
        )
        .get({ pc: from!.changedUs, pt: from!.table, pi: from!.id, skip }) as
        | [number, string, string]
        | undefined;
      return end && { changedUs: end[0], table: end[1], id: end[2] };
    },
    matches: (from, bound, count) =>
      handle
        .statement(
          `changes:tombstones:${slots}:${bound !== undefined}`,
          () => tombstonesSql(slots, bound !== undefined),
          {
            raw: true,
          },
        )
        .all({
          pc: from!.changedUs,
          pt: from!.table,
          pi: from!.id,
          ...(bound && { bc: bound.changedUs, bt: bound.table, bi: bound.id }),
          ...names,
          limit: count,
        }) as [number, PageTable, string][],
  });
  return result.reached === undefined
    ? { tombstones: result.rows }
    : { tombstones: result.rows, reached: result.reached };
}

/**
 * Past where the tombstones were read to (readTombstones' `reached`): a tombstone not read could
 * come before this upsert, so a page takes no upsert after it.
 */
function pastTombstonesRead(upsert: ChangeKey, reached: ChangePosition | undefined): boolean {
  return reached !== undefined && comparePositions(upsert, reached) > 0;
}

/**
 * The first `limit` changes of upserts (in feed order) and tombstones (readTombstones), each read
 * up to limit + 1: a change left over is one after the page's last. With `reached` (the
 * tombstones were read only up to it), no upsert after it is taken, and a page short of `limit`
 * stops there. `upsertsTaken`: how many of `upserts` the page holds (its first ones).
 */
export function mergeTombstones(
  upserts: readonly ChangeKey[],
  tombstones: readonly [number, PageTable, string][],
  limit: number,
  reached?: ChangePosition,
): ChangesPage & { upsertsTaken: number } {
  let nextUpsert = 0;
  let nextTombstone = 0;
  const rows: ChangeKey[] = [];
  while (rows.length < limit) {
    const upsert = upserts[nextUpsert];
    const tombstone = tombstones[nextTombstone];
    // A row and a tombstone of one id never coexist; were they to, the row comes first.
    if (
      tombstone !== undefined &&
      (upsert === undefined ||
        tombstone[0] < upsert.changedUs ||
        (tombstone[0] === upsert.changedUs &&
          (tombstone[1] < upsert.table || (tombstone[1] === upsert.table && tombstone[2] < upsert.id))))
    ) {
      rows.push({ op: 'delete', table: tombstone[1], id: tombstone[2], changedUs: tombstone[0] });
      nextTombstone++;
    } else if (upsert !== undefined) {
      if (pastTombstonesRead(upsert, reached)) break;
      rows.push(upsert);
      nextUpsert++;
    } else {
      break;
    }
  }
  if (reached !== undefined && rows.length < limit) {
    return { rows, hasMore: true, reached, upsertsTaken: nextUpsert };
  }
  const hasMore = nextTombstone < tombstones.length || nextUpsert < upserts.length;
  return { rows, hasMore, upsertsTaken: nextUpsert };
}

/**
 * The documents of a page's upserts of one table: its first `count` rows after `after` in change
 * order, `columns` of each. The upserts of one table on a page are contiguous in its change-time
 * index right after the position (the merge takes a prefix of each range), so this is one range
 * walk of `count` index steps plus a row lookup each, not a lookup per id. Read in the snapshot
 * of readChanges (ReadHandle.snapshot): the same rows, in the same order (the caller checks the ids).
 */
export function readChangedRows(
  handle: ReadHandle,
  table: PageTable,
  after: ChangePosition,
  count: number,
  columns: readonly string[],
): Record<string, unknown>[] {
  if (!Number.isInteger(count) || count < 1) throw new Error('changes: count must be >= 1');
  const build = rowBuilder<Record<string, unknown>>(columns); // checks the names first
  const later = table >= after.table;
  const statement = handle.statement(
    `changes:documents:${table}:${later}:${columns.join(',')}`,
    () => changedRowsSql(table, later, columns),
    { raw: true },
  );
  const rows: Record<string, unknown>[] = [];
  for (const values of statement.all(rangeParams(table, later, after, count)) as unknown[][]) {
    rows.push(build(values));
  }
  return rows;
}

function rangeParams(table: PageTable, later: boolean, after: ChangePosition, limit: number) {
  // A table before the position's at the same change time is past; at or after it, its ids after
  // the position's id ('' = all of them) still come.
  return later
    ? { pc: after.changedUs, pi: table === after.table ? after.id : '', limit }
    : { pc: after.changedUs, limit };
}

/** Feed order of two positions (a change is one): change time, then table, then id. */
export function comparePositions(a: ChangePosition, b: ChangePosition): number {
  if (a.changedUs !== b.changedUs) return a.changedUs - b.changedUs;
  if (a.table !== b.table) return a.table < b.table ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

/** Feed order of changes: their positions, then upsert before delete (never both at once). */
export function compareChanges(a: ChangeKey, b: ChangeKey): number {
  return comparePositions(a, b) || (a.op === b.op ? 0 : a.op === 'upsert' ? -1 : 1);
}

const KEY_COLUMNS = ['_changed_us', 'id'] as const;

/**
 * `LIMIT CAST(@limit AS INTEGER)`, not `LIMIT @limit`: with better-sqlite3's SQLite (3.54.1) a bare
 * LIMIT parameter adds ~3.5 µs to every execution of a range of keys, the same value bound each time,
 * and more to larger statements (~7 µs to the tombstones' one), as if the statement were compiled
 * again after each bind (SQLite prepares again a statement whose plan read a bound value). Behind
 * a CAST the value is only read when the statement runs; the plan is the same (changes-plans test).
 */
export const CAST_LIMIT = 'LIMIT CAST(@limit AS INTEGER)';

/**
 * The SQL of one table's range of changed rows: its keys, or `columns` for the documents
 * (readChangedRows). Exported for the plan tests.
 */
export function changedRowsSql(
  table: PageTable,
  later: boolean,
  columns: readonly string[] = KEY_COLUMNS,
): string {
  const after = later ? '("_changed_us", "id") > (@pc, @pi)' : '"_changed_us" > @pc';
  // Named: without statistics SQLite might take the primary key for a range on id.
  return `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(table)} INDEXED BY ${changeIndex(table)}
    WHERE ${after} ORDER BY "_changed_us", "id" ${CAST_LIMIT}`;
}

/** The SQL of the tombstones' range for `count` tables (exported for the plan tests). */
export function tombstonesSql(count: number, hasBound = false): string {
  const names = Array.from({ length: count }, (_, index) => `@t${index}`).join(', ');
  const bound = hasBound ? ` AND ("_changed_us", "table_name", "id") <= (@bc, @bt, @bi)` : '';
  return `SELECT "_changed_us", "table_name", "id" FROM "tombstones" INDEXED BY "tombstones_by_changed"
    WHERE ("_changed_us", "table_name", "id") > (@pc, @pt, @pi)${bound} AND "table_name" IN (${names})
    ORDER BY "_changed_us", "table_name", "id" ${CAST_LIMIT}`;
}
