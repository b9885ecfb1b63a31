import { quoteIdent } from '@pda/projections/model';
import { RESOURCE_NAMES, RESOURCES, type ResourceDef } from '@pda/schemas/registry';
import { type DataDictionary, type DictionaryTable, tablesIn } from '../dictionary/build-dictionary.ts';

/**
 * The analysis database `snapshot --all` builds: every company file's rows in one SQLite file,
 * each table with a `company_id` column first, and a `companies` table naming them. Derived from
 * the data dictionary (the company files' tables and columns, less the stored `_json` documents,
 * which repeat the columns) and the registry's relations (declared as foreign keys, so Datasette
 * shows a category's or a company's name beside its id).
 */

export interface AnalysisColumn {
  readonly name: string;
  /** TEXT, INTEGER or REAL, with NOT NULL when the file's column has it. */
  readonly type: string;
  readonly description: string;
  readonly unit: string | null;
  /** `<table>(id)` this column points at. */
  readonly references: string | null;
}

export interface AnalysisTable {
  readonly name: string;
  readonly description: string;
  readonly columns: readonly AnalysisColumn[];
  readonly primaryKey: readonly string[];
  /** Extra indexes, created after the rows are in. */
  readonly indexes: readonly (readonly string[])[];
  /** The company file's table the rows come from (null for `companies`). */
  readonly from: string | null;
}

/** The columns left out of the analysis database (the api's stored JSON: the columns hold the same). */
const LEFT_OUT = new Set(['_json']);

const COMPANY_ID: AnalysisColumn = {
  name: 'company_id',
  type: 'TEXT NOT NULL',
  description: 'the company whose file the row comes from (companies.id)',
  unit: null,
  references: 'companies(id)',
};

/** `child.column → parent(id)` from the registry's relations. */
function relationKeys(): Map<string, string> {
  const keys = new Map<string, string>();
  for (const name of RESOURCE_NAMES) {
    const resource: ResourceDef = RESOURCES[name];
    for (const relation of Object.values(resource.relations)) {
      if (relation.cardinality === 'many')
        keys.set(`${relation.table}.${relation.key}`, `${resource.table}(id)`);
      else keys.set(`${resource.table}.${relation.key}`, `${relation.table}(id)`);
    }
  }
  return keys;
}

function fromCompanyTable(table: DictionaryTable, keys: Map<string, string>): AnalysisTable {
  const columns = table.columns
    .filter((column) => !LEFT_OUT.has(column.name))
    .map(
      (column): AnalysisColumn => ({
        name: column.name,
        type: column.type,
        description: column.description,
        unit: column.unit,
        references: keys.get(`${table.name}.${column.name}`) ?? null,
      }),
    );
  const key = table.columns.filter((column) => column.primaryKey).map((column) => column.name);
  return {
    name: table.name,
    description: `${table.description} One row per company file row, with its company_id.`,
    columns: [COMPANY_ID, ...columns],
    primaryKey: ['company_id', ...key],
    // Lookups by id alone (Datasette's labels, joins across companies) and by the relation keys.
    indexes: [
      ...(key.length === 1 && key[0] === 'id' ? [['id']] : []),
      ...columns.filter((column) => column.references !== null).map((column) => [column.name]),
    ],
    from: table.name,
  };
}

export function analysisSchema(dictionary: DataDictionary): AnalysisTable[] {
  const keys = relationKeys();
  const company = tablesIn(dictionary, 'company');
  // The tables that hold records (captured from PostgreSQL) and the deletions; not the file's
  // bookkeeping (meta, truncations), which the companies table summarizes.
  const copied = company.filter((table) => table.source !== null || table.name === 'tombstones');
  const control = tablesIn(dictionary, 'control').find((table) => table.name === 'companies');
  const controlColumns: AnalysisColumn[] = (control?.columns ?? [])
    .filter((column) => column.name !== '_src_lsn')
    .map((column) => ({
      name: column.name,
      type: column.name === 'id' ? 'TEXT NOT NULL' : 'TEXT',
      description: column.description,
      unit: column.unit,
      references: null,
    }));
  const companies: AnalysisTable = {
    name: 'companies',
    description:
      "Every company of the data directory: its row of control.sqlite (NULL columns when control.sqlite does not know it) and its file's state when the snapshot read it.",
    columns: [
      ...controlColumns,
      {
        name: 'schema_version',
        type: 'INTEGER',
        description: "the company file's schema version (NULL: no file)",
        unit: null,
        references: null,
      },
      {
        name: 'last_changed_at',
        type: 'TEXT',
        description: "the file's last change time when the snapshot read it (meta.last_changed_us)",
        unit: 'ISO 8601 UTC, µs',
        references: null,
      },
      {
        name: 'snapshot_at',
        type: 'TEXT',
        description: 'when the snapshot read the file (its rows are the file as of that moment)',
        unit: 'ISO 8601 UTC',
        references: null,
      },
    ],
    primaryKey: ['id'],
    indexes: [],
    from: null,
  };
  return [companies, ...copied.map((table) => fromCompanyTable(table, keys))];
}

export function createTableSql(table: AnalysisTable): string {
  const columns = table.columns.map(
    (column) =>
      `  ${quoteIdent(column.name)} ${column.type}${column.references ? ` REFERENCES ${referenceSql(column.references)}` : ''}`,
  );
  const key = `  PRIMARY KEY (${table.primaryKey.map(quoteIdent).join(', ')})`;
  return `CREATE TABLE ${quoteIdent(table.name)} (\n${[...columns, key].join(',\n')}\n) STRICT`;
}

function referenceSql(reference: string): string {
  const [table, column] = reference.replace(')', '').split('(');
  return `${quoteIdent(table ?? '')}(${quoteIdent(column ?? '')})`;
}

export function createIndexesSql(table: AnalysisTable): string[] {
  return table.indexes.map(
    (columns) =>
      `CREATE INDEX ${quoteIdent(`${table.name}_by_${columns.join('_')}`)} ON ${quoteIdent(table.name)} (${columns
        .map(quoteIdent)
        .join(', ')})`,
  );
}
