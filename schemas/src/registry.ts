/**
 * The table registry: the one list of what is captured (Debezium, schemas/<table>.avsc), projected
 * (per-company SQLite files and control.sqlite) and exported (the api's resources). Everything else
 * takes its lists from here: the source/tenant table lists (@pda/projections model/change.ts), the
 * captured tables (./tables.ts, and the stack's publication and connector through
 * dev-world/stack/captured-tables.ts), the projection column lists and row types
 * (@pda/projections read/tables.ts), the scope vocabulary (api and key CLI), the api's routes and
 * each resource's JSON (its document shape), and the testing helpers. What cannot import
 * TypeScript (dev-world/db/schema.sql, the .avsc files, the SQLite migrations, api/openapi.yaml) is
 * compared with this registry by test/cross-package/registry-consistency.test.ts.
 * docs/adding-a-table.md walks through adding a table.
 *
 * Data (and two helpers that write it), no imports: @pda/schemas is the leaf of the workspace (`@pda/schemas/registry`).
 */

/**
 * A projected column: its SQLite type (the migrations declare TEXT, INTEGER or REAL, STRICT) and
 * whether it may be NULL (`?`). Money is TEXT (exact decimal string), timestamps ISO 8601 TEXT.
 */
export type ColumnType = 'text' | 'text?' | 'integer' | 'integer?' | 'real' | 'real?';

/** Projected columns in table order (bookkeeping _src_lsn/_changed_us are not listed). */
export type Columns = Readonly<Record<string, ColumnType>>;

export interface TableDef {
  /** `tenant`: rows live in the company file of their company_id; `control`: in control.sqlite. */
  readonly kind: 'tenant' | 'control';
  /** Primary-key columns in key order (also the Kafka message key). */
  readonly primaryKey: readonly string[];
  readonly columns: Columns;
}

/**
 * A response document: each member is read from a column of the table (a string leaf) or is a
 * nested object of the same kind (`address: { line1: 'address_line1', ... }`). Members appear in
 * the order written here; relations follow them.
 */
export type DocumentShape = { readonly [member: string]: string | DocumentShape };

export interface RelationDef {
  /** The projected table the relation embeds (a tenant table whose primary key is `id`). */
  readonly table: string;
  /** Scope needed on top of the resource's own; absent when the resource's scope covers it. */
  readonly scope?: string;
  /**
   * `one`: the resource's column `key` holds the related row's id; the member is that row's
   * document, or null when it is not known (deleted, or not projected yet).
   * `many`: the related table's column `key` holds the resource's id; the member is an array of
   * the related documents ordered by id, [] when there are none.
   */
  readonly cardinality: 'one' | 'many';
  readonly key: string;
  /**
   * `many` only: at most this many related documents are embedded per resource, the first by id;
   * a resource with more also carries `<member>_truncated: true` (right after the member). Without
   * it the size of one page would have no bound: nothing limits how many rows refer to one
   * resource (docs/public-data-api-v1.md, "Embedded contacts").
   */
  readonly maxEmbedded?: number;
  /** How each related row becomes JSON (its columns are the related table's). */
  readonly document: DocumentShape;
}

/** The member that says a `many` relation was cut at its `maxEmbedded` (RelationDef). */
export function truncatedMember(member: string): string {
  return `${member}_truncated`;
}

export interface ResourceDef {
  /** Projected table the resource pages over (a tenant table). */
  readonly table: string;
  /** Collection path; the item path is `${path}/{${itemParam}}`. */
  readonly path: string;
  readonly itemParam: string;
  /** operationIds of the list and item operations in api/openapi.yaml. */
  readonly operations: { readonly list: string; readonly get: string };
  /** Scope that grants read access (`{resource}:read`) and its display grouping. */
  readonly scope: string;
  readonly domain: string;
  /** How a row becomes the contract's JSON; with the relations, the members `fields[...]` accepts. */
  readonly document: DocumentShape;
  /** Fields `sort` accepts (NOT NULL, indexed as (column, id) in the company file). */
  readonly sort: readonly string[];
  /** Relations `include` accepts. */
  readonly relations: Readonly<Record<string, RelationDef>>;
}

const SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;

/** Captured source tables in capture order. */
export const TABLES = {
  companies: {
    kind: 'control',
    primaryKey: ['id'],
    columns: { id: 'text', name: 'text', currency: 'text', created_at: 'text', updated_at: 'text' },
  },
  api_keys: {
    kind: 'control',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      name: 'text',
      prefix: 'text',
      last_four: 'text',
      key_sha256: 'text',
      scopes: 'text',
      expires_at: 'text?',
      revokes_at: 'text?',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  api_key_companies: {
    kind: 'control',
    primaryKey: ['api_key_id', 'company_id'],
    columns: { api_key_id: 'text', company_id: 'text' },
  },
  sites: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      name: 'text',
      name_for_operators: 'text',
      site_reference: 'text',
      client_reference: 'text',
      client_company_id: 'text',
      notes: 'text',
      area: 'real?',
      address_line1: 'text',
      address_line2: 'text',
      city: 'text',
      region: 'text',
      postal_code: 'text',
      country: 'text',
      latitude: 'real?',
      longitude: 'real?',
      coordinates_accuracy: 'text?',
      geocoded_at: 'text?',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  site_contacts: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      site_id: 'text',
      name: 'text',
      role: 'text',
      email: 'text',
      phone: 'text',
      phone_type: 'text',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  services: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      name: 'text',
      name_for_operators: 'text',
      client_description: 'text',
      color: 'text',
      client_charge_type: 'text',
      client_rate_amount: 'text',
      client_rate_currency: 'text',
      client_minimum_minutes: 'integer',
      subcontractor_charge_type: 'text',
      subcontractor_rate_amount: 'text',
      subcontractor_rate_currency: 'text',
      subcontractor_minimum_minutes: 'integer',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  equipment_categories: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      name: 'text',
      group_name: 'text',
      default_client_rate_amount: 'text',
      default_client_rate_currency: 'text',
      default_subcontractor_rate_amount: 'text',
      default_subcontractor_rate_currency: 'text',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  equipment: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      category_id: 'text',
      name: 'text',
      name_for_operators: 'text',
      client_description: 'text',
      created_at: 'text',
      updated_at: 'text',
    },
  },
  consumables: {
    kind: 'tenant',
    primaryKey: ['id'],
    columns: {
      id: 'text',
      name: 'text',
      name_for_operators: 'text',
      client_description: 'text',
      group_name: 'text',
      default_client_rate_amount: 'text',
      default_client_rate_currency: 'text',
      default_subcontractor_rate_amount: 'text',
      default_subcontractor_rate_currency: 'text',
      created_at: 'text',
      updated_at: 'text',
    },
  },
} as const satisfies Readonly<Record<string, TableDef>>;

/** Members read from the column of the same name. */
function sameNames<const N extends string>(...names: N[]): { readonly [K in N]: K } {
  return Object.fromEntries(names.map((name) => [name, name])) as { readonly [K in N]: K };
}

/** A money object `{ amount, currency }` from the columns `<prefix>_amount` and `<prefix>_currency`. */
function money<const P extends string>(prefix: P) {
  return { amount: `${prefix}_amount`, currency: `${prefix}_currency` } as const;
}

const CATEGORY_DOCUMENT = {
  ...sameNames('id', 'name'),
  group: 'group_name',
  default_rates: { client: money('default_client_rate'), subcontractor: money('default_subcontractor_rate') },
  ...sameNames('created_at', 'updated_at'),
} as const satisfies DocumentShape;

/**
 * Exported resources in the order of docs/public-data-api-v1.md (also the order of the scope
 * vocabulary, `/v1/reference/scopes` and the key CLI). Documents follow the member tables there.
 */
export const RESOURCES = {
  sites: {
    table: 'sites',
    path: '/v1/sites',
    itemParam: 'siteId',
    operations: { list: 'listSites', get: 'getSite' },
    scope: 'sites:read',
    domain: 'sites',
    document: {
      ...sameNames(
        'id',
        'name',
        'name_for_operators',
        'site_reference',
        'client_reference',
        'client_company_id',
        'notes',
        'area',
      ),
      address: {
        line1: 'address_line1',
        line2: 'address_line2',
        ...sameNames('city', 'region', 'postal_code', 'country'),
      },
      coordinates: {
        ...sameNames('latitude', 'longitude'),
        accuracy: 'coordinates_accuracy',
        geocoded_at: 'geocoded_at',
      },
      ...sameNames('created_at', 'updated_at'),
    },
    sort: SORTABLE,
    relations: {
      // Contacts are part of a site: sites:read covers them.
      contacts: {
        table: 'site_contacts',
        cardinality: 'many',
        key: 'site_id',
        // A page of 200 sites then embeds at most 20,000 contacts (~5 MB); real sites have a few.
        maxEmbedded: 100,
        document: sameNames('id', 'name', 'role', 'email', 'phone', 'phone_type'),
      },
    },
  },
  services: {
    table: 'services',
    path: '/v1/services',
    itemParam: 'serviceId',
    operations: { list: 'listServices', get: 'getService' },
    scope: 'services:read',
    domain: 'catalogue',
    document: {
      ...sameNames('id', 'name', 'name_for_operators', 'client_description', 'color'),
      client: {
        charge_type: 'client_charge_type',
        rate: money('client_rate'),
        minimum_minutes: 'client_minimum_minutes',
      },
      subcontractor: {
        charge_type: 'subcontractor_charge_type',
        rate: money('subcontractor_rate'),
        minimum_minutes: 'subcontractor_minimum_minutes',
      },
      ...sameNames('created_at', 'updated_at'),
    },
    sort: SORTABLE,
    relations: {},
  },
  equipment: {
    table: 'equipment',
    path: '/v1/equipment',
    itemParam: 'equipmentId',
    operations: { list: 'listEquipment', get: 'getEquipment' },
    scope: 'equipment:read',
    domain: 'catalogue',
    document: sameNames(
      'id',
      'name',
      'name_for_operators',
      'client_description',
      'category_id',
      'created_at',
      'updated_at',
    ),
    sort: SORTABLE,
    relations: {
      category: {
        table: 'equipment_categories',
        scope: 'equipment-categories:read',
        cardinality: 'one',
        key: 'category_id',
        document: CATEGORY_DOCUMENT,
      },
    },
  },
  'equipment-categories': {
    table: 'equipment_categories',
    path: '/v1/equipment-categories',
    itemParam: 'categoryId',
    operations: { list: 'listEquipmentCategories', get: 'getEquipmentCategory' },
    scope: 'equipment-categories:read',
    domain: 'catalogue',
    document: CATEGORY_DOCUMENT,
    sort: SORTABLE,
    relations: {},
  },
  consumables: {
    table: 'consumables',
    path: '/v1/consumables',
    itemParam: 'consumableId',
    operations: { list: 'listConsumables', get: 'getConsumable' },
    scope: 'consumables:read',
    domain: 'catalogue',
    document: {
      ...sameNames('id', 'name', 'name_for_operators', 'client_description'),
      group: 'group_name',
      default_rates: {
        client: money('default_client_rate'),
        subcontractor: money('default_subcontractor_rate'),
      },
      ...sameNames('created_at', 'updated_at'),
    },
    sort: SORTABLE,
    relations: {},
  },
} as const satisfies Readonly<Record<string, ResourceDef>>;

// ---- derived names and types ------------------------------------------------------------------

export type TableName = keyof typeof TABLES;
export type TenantTableName = {
  [T in TableName]: (typeof TABLES)[T]['kind'] extends 'tenant' ? T : never;
}[TableName];
export type ControlTableName = Exclude<TableName, TenantTableName>;
export type ResourceName = keyof typeof RESOURCES;
/** Projected tables an exported resource pages over. */
export type ResourceTableName = (typeof RESOURCES)[ResourceName]['table'];

/** TypeScript value of a column type. */
export type ColumnValueOf<C extends ColumnType> = C extends `${infer Base}?`
  ? BaseValue<Base> | null
  : BaseValue<C>;
type BaseValue<B extends string> = B extends 'text' ? string : number;

/** The row type of a projected table, derived from its registry columns. */
export type RowOf<T extends TableName> = {
  -readonly [C in keyof (typeof TABLES)[T]['columns']]: (typeof TABLES)[T]['columns'][C] extends ColumnType
    ? ColumnValueOf<(typeof TABLES)[T]['columns'][C]>
    : never;
};

/** Column names of a table's row type, in table order. */
export type ColumnName<T extends TableName> = keyof RowOf<T> & string;

function keysOf<O extends object>(object: O): (keyof O & string)[] {
  return Object.keys(object) as (keyof O & string)[];
}

/** Captured source tables in capture order (topics pda.public.<table>, one .avsc each). */
export const TABLE_NAMES: readonly TableName[] = keysOf(TABLES);

export const TENANT_TABLE_NAMES: readonly TenantTableName[] = TABLE_NAMES.filter(
  (table): table is TenantTableName => TABLES[table].kind === 'tenant',
);

export const CONTROL_TABLE_NAMES: readonly ControlTableName[] = TABLE_NAMES.filter(
  (table): table is ControlTableName => TABLES[table].kind === 'control',
);

export const RESOURCE_NAMES: readonly ResourceName[] = keysOf(RESOURCES);

/**
 * Every member a resource's response may carry (`fields[<resource>]`): its document's members,
 * then its relations. `id` comes first and is always returned.
 */
export function resourceFields(resource: ResourceName): readonly string[] {
  const { document, relations } = RESOURCES[resource] as ResourceDef;
  return [...Object.keys(document), ...Object.keys(relations)];
}

const COLUMN_NAMES = Object.fromEntries(
  TABLE_NAMES.map((table): [TableName, readonly string[]] => [
    table,
    Object.freeze(Object.keys(TABLES[table].columns)),
  ]),
) as unknown as { readonly [T in TableName]: readonly ColumnName<T>[] };

/**
 * A table's projected column names in table order. The same array on every call: row builders
 * and statement caches are keyed by it.
 */
export function columnNames<T extends TableName>(table: T): readonly ColumnName<T>[] {
  return COLUMN_NAMES[table];
}

/**
 * The stored document of each table that has one: the JSON the api serves for its rows, rendered
 * by ingest when it writes them (column `_json` of the company file). An exported table's is its
 * resource's document; a table only embedded by a relation (site_contacts) takes the relation's.
 */
export function tableDocument(table: TableName): DocumentShape | undefined {
  return DOCUMENTS.get(table);
}

const DOCUMENTS: ReadonlyMap<TableName, DocumentShape> = new Map(
  RESOURCE_NAMES.flatMap((resource): [TableName, DocumentShape][] => {
    const def: ResourceDef = RESOURCES[resource];
    return [
      [def.table as TableName, def.document],
      ...Object.values(def.relations).map((relation): [TableName, DocumentShape] => [
        relation.table as TableName,
        relation.document,
      ]),
    ];
  }).reverse(), // a resource's own document wins over a relation's (test/cross-package/registry-consistency.test.ts checks they agree)
);

/** Tables with a stored document, in table order. */
export const DOCUMENT_TABLE_NAMES: readonly TenantTableName[] = TENANT_TABLE_NAMES.filter((table) =>
  DOCUMENTS.has(table),
);

/**
 * The version of the stored documents. Any change to a document (a member, a nested object, a new
 * table's document) bumps `version` and sets `digest` to the value the consistency test prints:
 * ingest then re-renders every stored document of a file from its columns when it opens it, and
 * the api refuses files at another version (projections/README.md, "Stored documents").
 */
export const REPRESENTATION = {
  version: 1,
  digest: '22d4dde6342189f3',
} as const;

export interface ScopeEntry {
  /** `{resource}:{ability}` */
  readonly scope: string;
  readonly resource: string;
  readonly ability: string;
  /** display grouping */
  readonly domain: string;
}

type ScopeOf<R extends ResourceName> = {
  readonly scope: (typeof RESOURCES)[R]['scope'];
  readonly resource: R;
  readonly ability: 'read';
  readonly domain: (typeof RESOURCES)[R]['domain'];
};

/**
 * The scope vocabulary (docs/public-data-api-v1.md, "Scope entry"): one `read` scope per exported
 * resource, in resource order. Keys are issued outside the public API, so there is deliberately no
 * `api-keys` scope.
 */
export const SCOPES: readonly ScopeOf<ResourceName>[] = RESOURCE_NAMES.map((resource) => ({
  scope: RESOURCES[resource].scope,
  resource,
  ability: 'read',
  domain: RESOURCES[resource].domain,
}));

export type Scope = (typeof RESOURCES)[ResourceName]['scope'];
