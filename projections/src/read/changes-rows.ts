import { quoteIdent } from '../model/quote-ident.ts';
import {
  CAST_LIMIT,
  type ChangeKey,
  type ChangesPage,
  type ChangesRequest,
  mergeTombstones,
  readChangedRows,
  readChanges,
  readTombstones,
} from './changes.ts';
import { changeIndex } from './page-sql.ts';
import type { ReadHandle } from './read-handle.ts';
import { rowBuilder } from './row-builder.ts';
import type { PageTable } from './tables.ts';

/**
 * A change-feed page with its upserts' rows (their stored documents), in one statement for the
 * rows of every table: each table's range of its change-time index `(_changed_us, id)` after the
 * position is one arm of a UNION ALL ordered by (change time, id), which SQLite answers as a merge
 * of the arms' index ranges (no sort: changes-plans test) and stops after limit + 1 rows, so it
 * reads the winners' rows and one row ahead per table, not limit + 1 keys per table and the
 * winners again (readChanges then readChangedRows: bench/results/api-changes-2026-12-01.md). The
 * tombstones are their own range (readTombstones), merged here.
 *
 * The feed's order is (change time, table, id); the statement's (change time, id) differs only
 * between rows of two tables at one change time, which the writer never gives (every row its own
 * change time: company-file.ts, nextChangeTime), but a file may hold (the merge test makes them).
 * Rows of one change time are put in table order here, a stable sort keeping SQLite's id order;
 * when limit + 1 rows end inside one change time, the rest of it was not read, and the page is
 * read by the per-table ranges instead (readChanges), which order any ties.
 */

export interface ChangesRowsRequest extends ChangesRequest {
  /** The columns read with each upsert of `tables[i]` (its stored document, relation keys…). */
  readonly columns: readonly (readonly string[])[];
}

export interface ChangesRowsPage extends ChangesPage {
  /** Per row of `rows`: an upsert's `columns`, undefined for a delete. */
  readonly records: (Record<string, unknown> | undefined)[];
}

/** Columns before an arm's own: change time, id, the arm's index in `tables`. */
const KEY_WIDTH = 3;

export function readChangesWithRows(handle: ReadHandle, request: ChangesRowsRequest): ChangesRowsPage {
  const { tables, after, limit, columns } = request;
  if (tables.length === 0) throw new Error('changes: at least one table');
  if (columns.length !== tables.length) throw new Error('changes: one column list per table');
  if (!Number.isInteger(limit) || limit < 1) throw new Error('page limit must be >= 1');
  const take = limit + 1;
  const builders = columns.map((list) => offsetBuilder(list));
  const statement = handle.statement(
    `changes:rows-union:${tables.join(',')}:${columns.map((list) => list.join(',')).join(';')}`,
    () => changesUnionSql(tables, columns),
    { raw: true },
  );
  const params: Record<string, string | number> = { limit: take };
  for (let index = 0; index < tables.length; index++) {
    const table = tables[index]!;
    // Before the position's table at its change time: that time is past (`_changed_us > t`, as
    // `(_changed_us, id) > (t + 1, '')`: ids are never ''); at it, its ids after the position's;
    // after it, all of that time.
    const before = table < after.table;
    params[`c${index}`] = before ? after.changedUs + 1 : after.changedUs;
    params[`i${index}`] = table === after.table ? after.id : '';
  }
  const upserts = statement.all(params) as unknown[][];
  if (upserts.length === take && upserts[limit]![0] === upserts[limit - 1]![0]) {
    return readByRanges(handle, request);
  }
  for (let index = 1; index < upserts.length; index++) {
    if (upserts[index]![0] === upserts[index - 1]![0]) {
      upserts.sort((a, b) => {
        if (a[0] !== b[0]) return (a[0] as number) - (b[0] as number);
        const ta = tables[a[2] as number]!;
        const tb = tables[b[2] as number]!;
        return ta === tb ? 0 : ta < tb ? -1 : 1;
      });
      break;
    }
  }
  const keys: ChangeKey[] = upserts.map((values) => ({
    op: 'upsert',
    table: tables[values[2] as number]!,
    id: values[1] as string,
    changedUs: values[0] as number,
  }));
  const { tombstones, reached } = readTombstones(handle, request, take);
  const { rows, hasMore, upsertsTaken, reached: stopped } = mergeTombstones(keys, tombstones, limit, reached);
  const records = new Array<Record<string, unknown> | undefined>(rows.length);
  let next = 0;
  for (let index = 0; index < rows.length; index++) {
    if (rows[index]!.op === 'delete') continue;
    const values = upserts[next++]!;
    records[index] = builders[values[2] as number]!(values);
  }
  if (next !== upsertsTaken) throw new Error('change feed: rows out of step with the keys');
  return stopped === undefined ? { rows, hasMore, records } : { rows, hasMore, records, reached: stopped };
}

/**
 * The same page by the per-table ranges and a range walk of each table's winners (readChanges,
 * readChangedRows), for a page whose limit + 1 rows end inside one change time.
 */
function readByRanges(handle: ReadHandle, request: ChangesRowsRequest): ChangesRowsPage {
  const { tables, after, columns } = request;
  const page = readChanges(handle, request);
  const counts = new Map<PageTable, number>();
  for (const row of page.rows) {
    if (row.op === 'upsert') counts.set(row.table, (counts.get(row.table) ?? 0) + 1);
  }
  const read = new Map<PageTable, { records: Record<string, unknown>[]; next: number }>();
  for (const [table, count] of counts) {
    const list = columns[tables.indexOf(table)]!;
    read.set(table, { records: readChangedRows(handle, table, after, count, list), next: 0 });
  }
  const records = page.rows.map((row) => {
    if (row.op === 'delete') return undefined;
    const table = read.get(row.table)!;
    const record = table.records[table.next++]!;
    // One snapshot: the range holds the keys' rows. Anything else is a bug, not a page to serve.
    if (record.id !== row.id) throw new Error(`change feed: ${row.table} rows out of step with the keys`);
    return record;
  });
  return { ...page, records };
}

type OffsetBuilder = (values: readonly unknown[]) => Record<string, unknown>;
const builders = new WeakMap<readonly string[], OffsetBuilder>();

/** An object of `columns` from a union row's values after its keys (compiled once per list). */
function offsetBuilder(columns: readonly string[]): OffsetBuilder {
  let build = builders.get(columns);
  if (!build) {
    rowBuilder(columns); // checks the names
    const body = `return { ${columns.map((column, index) => `${column}: v[${KEY_WIDTH + index}]`).join(', ')} };`;
    build = new Function('v', body) as OffsetBuilder;
    builders.set(columns, build);
  }
  return build;
}

/**
 * The rows' statement (exported for the plan tests): arm i is `tables[i]`'s range after
 * (@c<i>, @i<i>), its change time, id, i and `columns[i]`, padded with NULLs to the widest list.
 */
export function changesUnionSql(
  tables: readonly PageTable[],
  columns: readonly (readonly string[])[],
): string {
  const width = Math.max(...columns.map((list) => list.length));
  const arms = tables.map((table, index) => {
    const own = columns[index]!.map(quoteIdent);
    const selected = ['"_changed_us"', '"id"', String(index), ...own];
    for (let pad = own.length; pad < width; pad++) selected.push('NULL');
    return `SELECT ${selected.join(', ')} FROM ${quoteIdent(table)} INDEXED BY ${changeIndex(table)}
    WHERE ("_changed_us", "id") > (@c${index}, @i${index})`;
  });
  return `${arms.join('\n    UNION ALL ')}\n    ORDER BY 1, 2 ${CAST_LIMIT}`;
}
