// What reconcile compares per captured table (@pda/schemas/registry): the projected columns in
// registry order, the primary key, the stored export document's renderer (the one ingest writes
// `_json` with), and PostgreSQL's select list in the projection's representation.
import { type ValuesRenderer, valuesRenderer } from '@pda/projections/model';
import { type ColumnType, TABLE_NAMES, TABLES, type TableName, tableDocument } from '@pda/schemas/registry';

export interface TablePlan {
  readonly table: TableName;
  readonly kind: 'tenant' | 'control';
  /** Projected columns in registry order: the order of the values on both sides. */
  readonly columns: readonly string[];
  /** Primary-key columns, and their positions in `columns`. */
  readonly key: readonly string[];
  readonly keyIndexes: readonly number[];
  /** The stored document's renderer over values in `columns` order; undefined: no `_json`. */
  readonly render: ValuesRenderer | undefined;
}

export function tablePlan(table: TableName): TablePlan {
  const def = TABLES[table];
  const columns = Object.keys(def.columns);
  return {
    table,
    kind: def.kind,
    columns,
    key: def.primaryKey,
    keyIndexes: def.primaryKey.map((column) => columns.indexOf(column)),
    render: tableDocument(table) ? valuesRenderer(table, columns) : undefined,
  };
}

export const TENANT_PLANS: readonly TablePlan[] = TABLE_NAMES.filter((t) => TABLES[t].kind === 'tenant').map(
  tablePlan,
);
export const CONTROL_PLANS: readonly TablePlan[] = TABLE_NAMES.filter(
  (t) => TABLES[t].kind === 'control',
).map(tablePlan);

/**
 * A PostgreSQL column as an SQL expression that yields the projection's representation (the
 * documented mappings, projections/README.md "Conventions"): exact decimals as numeric's text
 * (`'125.00'`), REAL columns (area, coordinates) as float8, timestamps as ISO 8601 UTC text with
 * microseconds, arrays as a JSON array text (api_keys.scopes), uuids and char(n) as text.
 */
export function sourceExpression(column: string, dataType: string, projected: ColumnType): string {
  const c = `"${column}"`;
  if (dataType === 'timestamp with time zone') {
    return `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  }
  if (dataType === 'numeric') return projected.startsWith('real') ? `${c}::float8` : `${c}::text`;
  if (dataType === 'ARRAY') return `array_to_json(${c})::text`;
  if (dataType === 'uuid' || dataType === 'character') return `${c}::text`;
  return c;
}

/** The select list of `plan` in PostgreSQL, from the table's column types (information_schema). */
export function sourceSelectList(plan: TablePlan, dataTypes: ReadonlyMap<string, string>): string {
  const projected = TABLES[plan.table].columns as Readonly<Record<string, ColumnType>>;
  return plan.columns
    .map((column) => {
      const dataType = dataTypes.get(column);
      if (dataType === undefined) {
        throw new Error(`PostgreSQL table ${plan.table} has no column ${column} (the registry projects it)`);
      }
      return sourceExpression(column, dataType, projected[column]!);
    })
    .join(', ');
}
