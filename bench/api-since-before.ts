/**
 * The 'before' peer of bench/api-since.ts: readPage and readDeletions as they read a page with a
 * since before the plans of projections/src/read/since-plan.ts (page.ts and deletions.ts of
 * commit 37854c8, copied): the since is one more condition on whatever index SQLite picks — the
 * sort's for pages; for deletions the primary key (table_name, id), then a sort of every tombstone
 * of those tables. Run on the same handle as the code under test.
 */
import { quoteIdent } from '@pda/projections/model';
import type { Deletion, PageTable, ReadHandle, SortKey } from '@pda/projections/read';

export interface BeforeRequest {
  readonly sort: readonly SortKey[];
  readonly limit: number;
  readonly position?: readonly string[] | undefined;
  readonly changedSinceUs: number;
}

/** Rows of the page (forward only: the benchmark's pages go forward). */
export function readPageBefore(
  handle: ReadHandle,
  table: PageTable,
  request: BeforeRequest,
  columns: readonly string[],
): number {
  const hasPosition = request.position !== undefined;
  const signature = request.sort.map((key) => `${key.descending ? '-' : ''}${key.column}`).join(',');
  const statement = handle.statement(
    `before:page:${table}:${columns.join(',')}:${signature}:${hasPosition}`,
    () => pageSql(table, columns, request.sort, hasPosition),
    { raw: true },
  );
  const params: Record<string, string | number> = { limit: request.limit + 1, since: request.changedSinceUs };
  request.position?.forEach((value, index) => {
    params[`p${index}`] = value;
  });
  return statement.all(params).length;
}

function pageSql(
  table: PageTable,
  selected: readonly string[],
  sort: readonly SortKey[],
  hasPosition: boolean,
) {
  const columns = selected.map(quoteIdent).join(', ');
  const keys = sort.map((key) => ({ column: quoteIdent(key.column), descending: key.descending }));
  const where: string[] = ['"_changed_us" >= @since'];
  if (hasPosition) where.push(keysetCondition(keys));
  const order = keys.map((key) => `${key.column} ${key.descending ? 'DESC' : 'ASC'}`).join(', ');
  return [
    `SELECT ${columns} FROM ${quoteIdent(table)}`,
    `WHERE ${where.join(' AND ')}`,
    `ORDER BY ${order} LIMIT @limit`,
  ].join(' ');
}

function keysetCondition(keys: readonly { column: string; descending: boolean }[]): string {
  const first = keys[0]!;
  if (keys.every((key) => key.descending === first.descending)) {
    const op = first.descending ? '<' : '>';
    const left = keys.map((key) => key.column).join(', ');
    const right = keys.map((_, index) => `@p${index}`).join(', ');
    return `(${left}) ${op} (${right})`;
  }
  const branches = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((prior, j) => `${prior.column} = @p${j}`);
    equal.push(`${key.column} ${key.descending ? '<' : '>'} @p${index}`);
    return `(${equal.join(' AND ')})`;
  });
  const bound = `${first.column} ${first.descending ? '<=' : '>='} @p0`;
  return `(${bound} AND (${branches.join(' OR ')}))`;
}

/** One forward page of the deletions feed, the old statement. */
export function readDeletionsBefore(
  handle: ReadHandle,
  tables: readonly PageTable[],
  sinceUs: number,
  limit: number,
  position: Deletion | undefined,
): number {
  const statement = handle.statement(`before:deletions:${tables.length}:${position !== undefined}`, () => {
    const names = tables.map((_, index) => `@t${index}`).join(', ');
    const where = [`"_changed_us" >= @since`, `"table_name" IN (${names})`];
    if (position) where.push(`("_changed_us", "table_name", "id") > (@pc, @pt, @pi)`);
    return `SELECT "_changed_us", "table_name", "id" FROM "tombstones" WHERE ${where.join(' AND ')}
      ORDER BY "_changed_us" ASC, "table_name" ASC, "id" ASC LIMIT @limit`;
  });
  const params: Record<string, string | number> = { since: sinceUs, limit: limit + 1 };
  tables.forEach((table, index) => {
    params[`t${index}`] = table;
  });
  if (position) Object.assign(params, { pc: position.changedUs, pt: position.table, pi: position.id });
  return statement.all(params).length;
}
