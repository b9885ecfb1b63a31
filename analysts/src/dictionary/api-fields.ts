import {
  type DocumentShape,
  RESOURCE_NAMES,
  RESOURCES,
  type ResourceDef,
  TABLES,
  type TableName,
} from '@pda/schemas/registry';

/**
 * Which api fields each projected column feeds, read from the table registry's documents
 * (schemas/src/registry.ts): `sites.address_line1` → `/v1/sites address.line1`; a column of an
 * embedded table also feeds its parent's relation (`/v1/equipment category.name (include=category)`).
 */

export interface ApiField {
  /** The collection path (`/v1/sites`); the item path serves the same fields. */
  readonly path: string;
  /** Dotted member path (`address.line1`, `contacts[].name`); null for the whole record. */
  readonly member: string | null;
  /** The `include` value the member needs, when it comes from a relation. */
  readonly include: string | null;
}

export type ApiFields = ReadonlyMap<string, ReadonlyMap<string, readonly ApiField[]>>;

/** `/v1/sites address.line1`, `/v1/equipment category.name (include=category)`. */
export function apiFieldText(field: ApiField): string {
  const member = field.member ?? (field.include === null ? '(the whole record)' : '');
  const include = field.include === null ? '' : ` (include=${field.include})`;
  return `${field.path} ${member}`.trimEnd() + include;
}

function leaves(shape: DocumentShape, prefix: string, visit: (member: string, column: string) => void): void {
  for (const [member, value] of Object.entries(shape)) {
    if (typeof value === 'string') visit(`${prefix}${member}`, value);
    else leaves(value, `${prefix}${member}.`, visit);
  }
}

export function apiFieldsByColumn(): ApiFields {
  const fields = new Map<string, Map<string, ApiField[]>>();
  const add = (table: string, column: string, field: ApiField): void => {
    const byColumn = fields.get(table) ?? new Map<string, ApiField[]>();
    fields.set(table, byColumn);
    byColumn.set(column, [...(byColumn.get(column) ?? []), field]);
  };
  for (const name of RESOURCE_NAMES) {
    const resource: ResourceDef = RESOURCES[name];
    const { path } = resource;
    leaves(resource.document, '', (member, column) =>
      add(resource.table, column, { path, member, include: null }),
    );
    add(resource.table, '_json', { path, member: null, include: null });
    for (const [relation, def] of Object.entries(resource.relations)) {
      const prefix = def.cardinality === 'many' ? `${relation}[].` : `${relation}.`;
      leaves(def.document, prefix, (member, column) =>
        add(def.table, column, { path, member, include: relation }),
      );
      add(def.table, '_json', { path, member: relation, include: relation });
    }
  }
  return fields;
}

/** `/v1/...` paths a table is served as (its own resources), in registry order. */
export function resourcePaths(table: string): string[] {
  return RESOURCE_NAMES.map((name): ResourceDef => RESOURCES[name])
    .filter((resource) => resource.table === table)
    .map((resource) => resource.path);
}

/** The captured source table a projected table is fed from, if it is one. */
export function sourceTable(table: string): { readonly kind: 'tenant' | 'control' } | undefined {
  return Object.hasOwn(TABLES, table) ? TABLES[table as TableName] : undefined;
}
