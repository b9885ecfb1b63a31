import Database, { type Statement } from 'better-sqlite3';
import { migrate, type ProjectionKind } from '../../model/migrate.ts';
import { quoteIdent } from '../../model/quote-ident.ts';
import type { StatementCache } from './statement-cache.ts';

/**
 * Column layout of a projection table, read once per process from an in-memory database migrated
 * to the code's version (PRAGMA table_info), so the SQL migrations stay the single source of truth
 * for names, types and nullability, and planning needs no company file open.
 */

export type ColumnType = 'TEXT' | 'INTEGER' | 'REAL';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly notNull: boolean;
}

export interface TableSpec {
  readonly table: string;
  /** Primary-key column names in key order. */
  readonly pk: readonly string[];
  /** Data columns (primary key included), without the bookkeeping columns below. */
  readonly columns: readonly ColumnSpec[];
  /** Company tables carry _changed_us; control tables do not. */
  readonly hasChangeTime: boolean;
  /** Tables with a stored document carry _json (the record's JSON, rendered by the apply path). */
  readonly hasDocument: boolean;
}

/** Bookkeeping columns written by the apply path itself, never taken from a source row. */
export const SRC_LSN = '_src_lsn';
export const CHANGED_US = '_changed_us';
export const DOCUMENT = '_json';
const BOOKKEEPING = new Set([SRC_LSN, CHANGED_US, DOCUMENT]);

/** Per kind, per table: looked up for every planned row, so no key string is built per call. */
const cache = new Map<ProjectionKind, Map<string, TableSpec>>();
const schemas = new Map<ProjectionKind, Database.Database>();

interface TableInfoRow {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

/** All files of a kind share the schema of the code's version, so one read per table suffices. */
export function tableSpec(kind: ProjectionKind, table: string): TableSpec {
  let specs = cache.get(kind);
  if (!specs) {
    specs = new Map();
    cache.set(kind, specs);
  }
  const cached = specs.get(table);
  if (cached) return cached;
  const info = schemaDb(kind)
    .prepare(`PRAGMA table_info(${quoteIdent(table)})`)
    .all() as TableInfoRow[];
  if (info.length === 0) throw new Error(`projection table ${table} does not exist`);
  const spec: TableSpec = {
    table,
    pk: info
      .filter((c) => c.pk > 0)
      .sort((a, b) => a.pk - b.pk)
      .map((c) => c.name),
    columns: info
      .filter((c) => !BOOKKEEPING.has(c.name))
      .map((c) => ({ name: c.name, type: columnType(c.type), notNull: c.notnull === 1 || c.pk > 0 })),
    hasChangeTime: info.some((c) => c.name === CHANGED_US),
    hasDocument: info.some((c) => c.name === DOCUMENT),
  };
  specs.set(table, spec);
  return spec;
}

function schemaDb(kind: ProjectionKind): Database.Database {
  let db = schemas.get(kind);
  if (!db) {
    db = new Database(':memory:');
    migrate(db, kind);
    schemas.set(kind, db);
  }
  return db;
}

function columnType(declared: string): ColumnType {
  const type = declared.toUpperCase();
  if (type === 'TEXT' || type === 'INTEGER' || type === 'REAL') return type;
  throw new Error(`unsupported projection column type ${declared}`);
}

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
