import { latestVersion, migrationsFor, type ProjectionKind } from '@pda/projections/model';
import { REPRESENTATION } from '@pda/schemas/registry';
import Database from 'better-sqlite3';
import { type ApiField, apiFieldsByColumn, resourcePaths, sourceTable } from './api-fields.ts';
import { type Described, type MigrationComments, readMigrationComments } from './migration-comments.ts';

/**
 * The data dictionary of the projection files, generated (never hand-kept) from the numbered
 * migrations and the table registry: SQLite applies the migrations to an in-memory database and
 * says what each table and column is (type, NOT NULL, key, indexes); the migrations' comments say
 * what it means (migration-comments.ts); the registry says where it comes from and which api fields
 * it feeds (api-fields.ts). docs/data-dictionary.md is its Markdown; `pda projections describe`
 * prints it; the Datasette metadata is made from it.
 */

export interface DictionaryColumn {
  readonly name: string;
  /** As declared: `TEXT NOT NULL`, `REAL`, `INTEGER NOT NULL`. */
  readonly type: string;
  readonly primaryKey: boolean;
  readonly description: string;
  readonly unit: string | null;
  /** The api fields the column feeds; empty when it is not exported. */
  readonly apiFields: readonly ApiField[];
  /** Schema version of the file that added the column. */
  readonly since: number;
}

export interface DictionaryTable {
  readonly name: string;
  readonly file: ProjectionKind;
  readonly description: string;
  readonly since: number;
  /** The captured PostgreSQL table (`public.<name>`) the rows come from; null for ingest's own tables. */
  readonly source: string | null;
  /** The api paths serving the table as a resource. */
  readonly resources: readonly string[];
  readonly columns: readonly DictionaryColumn[];
  /** Secondary indexes as `name (col, col)`. */
  readonly indexes: readonly string[];
}

export interface DataDictionary {
  readonly versions: { readonly company: number; readonly control: number; readonly representation: number };
  readonly tables: readonly DictionaryTable[];
}

/** A table or column without a comment: the dictionary cannot be generated until it has one. */
export class DictionaryError extends Error {}

const KINDS: readonly ProjectionKind[] = ['company', 'control'];

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

function tablesOf(kind: ProjectionKind, comments: MigrationComments, missing: string[]): DictionaryTable[] {
  const db = new Database(':memory:');
  try {
    for (const step of migrationsFor(kind)) db.exec(step.sql);
    const names = (
      db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
        )
        .all() as { name: string }[]
    ).map((row) => row.name);
    const apiFields = apiFieldsByColumn();
    return names.map((name): DictionaryTable => {
      const table = comments.tables.get(name);
      if (!table?.description) missing.push(`table ${name}`);
      const columns = (
        db.prepare('SELECT name, type, "notnull", pk FROM pragma_table_xinfo(?)').all(name) as ColumnInfo[]
      ).map((info): DictionaryColumn => {
        const own: Described | undefined = comments.columns.get(`${name}.${info.name}`);
        const described = own ?? comments.shared.get(info.name);
        if (!described?.description) missing.push(`column ${name}.${info.name}`);
        return {
          name: info.name,
          type: `${info.type}${info.notnull ? ' NOT NULL' : ''}`,
          primaryKey: info.pk > 0,
          description: described?.description ?? '',
          unit: described?.unit ?? null,
          apiFields: apiFields.get(name)?.get(info.name) ?? [],
          since: comments.declared.get(`${name}.${info.name}`) ?? table?.since ?? 1,
        };
      });
      const indexes = (
        db
          .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid",
          )
          .all(name) as { name: string }[]
      ).map(({ name: index }) => {
        const keys = db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(index) as {
          name: string;
        }[];
        return `${index} (${keys.map((key) => key.name).join(', ')})`;
      });
      const source = sourceTable(name);
      return {
        name,
        file: kind,
        description: table?.description ?? '',
        since: table?.since ?? 1,
        source: source ? `public.${name}` : null,
        resources: resourcePaths(name),
        columns,
        indexes,
      };
    });
  } finally {
    db.close();
  }
}

export function buildDictionary(): DataDictionary {
  const missing: string[] = [];
  const tables = KINDS.flatMap((kind) => {
    const where = `projections/src/migrations/${kind}`;
    const before = missing.length;
    const result = tablesOf(kind, readMigrationComments(migrationsFor(kind)), missing);
    for (let i = before; i < missing.length; i++) missing[i] = `${missing[i]} (${where})`;
    return result;
  });
  if (missing.length > 0) {
    throw new DictionaryError(
      `no comment for ${missing.join(', ')}: every table and column needs one (analysts/README.md, "The data dictionary")`,
    );
  }
  return {
    versions: {
      company: latestVersion('company'),
      control: latestVersion('control'),
      representation: REPRESENTATION.version,
    },
    tables,
  };
}

/** The tables of one kind of file. */
export function tablesIn(dictionary: DataDictionary, file: ProjectionKind): DictionaryTable[] {
  return dictionary.tables.filter((table) => table.file === file);
}
