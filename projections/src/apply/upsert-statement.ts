import type { Statement } from 'better-sqlite3';
import { quoteIdent } from '../quote-ident.ts';
import type { StatementCache } from './statement-cache.ts';
import { CHANGED_US, DOCUMENT, SRC_LSN, type TableSpec } from './table-spec.ts';

/**
 * The guarded upsert of one table, prepared once per handle and per set of missing columns:
 *   INSERT ... ON CONFLICT (pk) DO UPDATE SET <provided columns> WHERE excluded._src_lsn > _src_lsn
 * Parameters: the table spec's columns in order, then _src_lsn, then _changed_us (company tables),
 * then _json (tables with a stored document).
 * Missing columns are inserted with their empty value but never overwrite a stored one.
 * `changes` is 0 when the guard refused the write.
 */
export function upsertStatement(
  statements: StatementCache,
  spec: TableSpec,
  missing: readonly string[],
): Statement {
  const key = missing.length === 0 ? `upsert:${spec.table}` : `upsert:${spec.table}:${missing.join(',')}`;
  return statements.get(key, () => {
    const t = quoteIdent(spec.table);
    const bookkeeping = [
      SRC_LSN,
      ...(spec.hasChangeTime ? [CHANGED_US] : []),
      ...(spec.hasDocument ? [DOCUMENT] : []),
    ];
    const insert = [...spec.columns.map((c) => c.name), ...bookkeeping];
    const update = [
      ...spec.columns
        .filter((c) => !spec.pk.includes(c.name) && !missing.includes(c.name))
        .map((c) => c.name),
      ...bookkeeping,
    ];
    return `INSERT INTO ${t} (${insert.map(quoteIdent).join(', ')})
      VALUES (${insert.map(() => '?').join(', ')})
      ON CONFLICT (${spec.pk.map(quoteIdent).join(', ')}) DO UPDATE SET
        ${update.map((c) => `${quoteIdent(c)} = excluded.${quoteIdent(c)}`).join(', ')}
      WHERE excluded.${quoteIdent(SRC_LSN)} > ${t}.${quoteIdent(SRC_LSN)}`;
  });
}
