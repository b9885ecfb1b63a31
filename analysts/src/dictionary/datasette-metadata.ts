import { analysisSchema } from '../snapshot/analysis-schema.ts';
import { type DataDictionary, tablesIn } from './build-dictionary.ts';

/**
 * Datasette's metadata for a snapshot, made from the data dictionary: a description per table and
 * column (with its unit or format), the `name` column as each table's label (Datasette shows it
 * beside an id that points at the row), default facets, and Pint units where a column has a
 * physical one (Datasette converts them). Two shapes of database: an analysis database
 * (`snapshot --all`, every table with company_id) or one company file's snapshot.
 */

export type SnapshotKind = 'analysis' | 'company';

/** Columns worth counting at a glance, per table. */
const FACETS: Readonly<Record<string, readonly string[]>> = {
  sites: ['city', 'country'],
  site_contacts: ['phone_type'],
  services: ['client_charge_type'],
  equipment_categories: ['group_name'],
  equipment: ['category_id'],
  consumables: ['group_name'],
  tombstones: ['table_name'],
  companies: ['currency'],
};

/** Pint names of the dictionary's physical units. */
const PINT_UNITS: Readonly<Record<string, string>> = { 'm²': 'm^2', minutes: 'minute' };

interface DescribedTable {
  readonly name: string;
  readonly description: string;
  readonly columns: readonly {
    readonly name: string;
    readonly description: string;
    readonly unit: string | null;
  }[];
}

function tableMetadata(table: DescribedTable, kind: SnapshotKind) {
  const columns = new Set(table.columns.map((column) => column.name));
  const facets = [
    ...(kind === 'analysis' && columns.has('company_id') ? ['company_id'] : []),
    ...(FACETS[table.name] ?? []),
  ].filter((facet) => columns.has(facet));
  const units = Object.fromEntries(
    table.columns.flatMap((column) => {
      const pint = column.unit === null ? undefined : PINT_UNITS[column.unit];
      return pint === undefined ? [] : [[column.name, pint]];
    }),
  );
  return {
    description: table.description,
    columns: Object.fromEntries(
      table.columns.map((column) => [
        column.name,
        column.unit === null ? column.description : `${column.description} [${column.unit}]`,
      ]),
    ),
    ...(columns.has('name') ? { label_column: 'name' } : {}),
    ...(facets.length > 0 ? { facets } : {}),
    ...(Object.keys(units).length > 0 ? { units } : {}),
  };
}

export function datasetteMetadata(dictionary: DataDictionary, database: string, kind: SnapshotKind) {
  const tables: readonly DescribedTable[] =
    kind === 'analysis' ? analysisSchema(dictionary) : tablesIn(dictionary, 'company');
  return {
    title: kind === 'analysis' ? 'Projection snapshot: every company' : 'Projection snapshot: one company',
    description:
      'A consistent snapshot of the projection files (pda projections snapshot), never the live files. Tables and columns are described by the data dictionary (docs/data-dictionary.md).',
    databases: {
      [database]: {
        tables: Object.fromEntries(tables.map((table) => [table.name, tableMetadata(table, kind)])),
      },
    },
  };
}
