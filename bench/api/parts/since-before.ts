/**
 * The 'before' peer of bench/api/since.ts's deletions table: readDeletions as it read a page with
 * a since before the plans of projections/src/read/since-plan.ts (deletions.ts of commit 37854c8,
 * copied): the since is one more condition on the primary key (table_name, id), then a sort of
 * every tombstone of those tables. Run on the same handle as the code under test. (The pages'
 * "before" is another checkout's readPage: api/parts/since-pages.ts, loadReadSide.)
 */
import type { Deletion, PageTable, ReadHandle } from '@pda/projections/read';

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
