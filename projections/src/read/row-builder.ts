/**
 * Rows are read as arrays (better-sqlite3 `raw` mode) and turned into objects by a function
 * compiled once per column list: an object literal with a fixed shape is several times cheaper
 * than the per-property objects better-sqlite3 builds itself, and page reads are the api's hot
 * path (bench/README.md, api). Column names come only from the static whitelists in tables.ts.
 */

export type RowBuilder<Row> = (values: readonly unknown[]) => Row;

/** Keyed by the (static) column list itself: no per-call key building on the hot path. */
const cache = new WeakMap<readonly string[], RowBuilder<unknown>>();

export function rowBuilder<Row>(columns: readonly string[]): RowBuilder<Row> {
  let builder = cache.get(columns);
  if (!builder) {
    for (const column of columns) {
      if (!/^[a-z_][a-z0-9_]*$/.test(column)) throw new Error(`not a column name: ${column}`);
    }
    const body = `return { ${columns.map((column, index) => `${column}: v[${index}]`).join(', ')} };`;
    builder = new Function('v', body) as RowBuilder<unknown>;
    cache.set(columns, builder);
  }
  return builder as RowBuilder<Row>;
}
