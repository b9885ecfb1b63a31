import type { PageTable, ReadHandle, SortKey } from '@pda/projections/read';
import {
  RESOURCE_NAMES,
  RESOURCES,
  type ResourceDef,
  type ResourceName,
  resourceFields,
} from '@pda/schemas/registry';
import type { ItemOperationId, ListOperationId } from '../contract/operation-types.ts';
import { relationEmbedder } from './relation-embedder.ts';

/**
 * How one exported resource maps onto its projection table, all from the table registry
 * (@pda/schemas/registry): the member names `fields[<name>]` accepts, the relations `include`
 * accepts (each with the extra scope it needs), and its JSON: the document ingest stored with each
 * row (`_json`, projections/src/model/representation.ts), with the included relations' stored
 * documents spliced in after the members. A new exported table is a registry entry, not a file here.
 */

export type Json = Record<string, unknown>;

export interface Relation {
  /** Scope needed on top of the resource's own (an included resource needs its scope: api/README.md). */
  readonly scope: string | undefined;
}

export interface Resource {
  /** Collection name: the `<resource>` of `fields[<resource>]` and part of the cursor binding. */
  readonly name: ResourceName;
  readonly table: PageTable;
  /** Path parameter of the item operation (`/v1/sites/{siteId}`). */
  readonly itemParam: string;
  /** operationIds of the list and item operations in api/openapi.yaml. */
  readonly operations: { readonly list: ListOperationId; readonly get: ItemOperationId };
  /** Every member a response may carry, relations included (`id` is always returned). */
  readonly fields: readonly string[];
  readonly relations: Readonly<Record<string, Relation>>;
  /** What an item read selects: the stored document and the relation keys. */
  readonly itemColumns: readonly string[];
  /**
   * What a page read selects: the stored document, the keys of this sort (the cursor needs the
   * first and last row's) and the relation keys. The same array per sort: statements and row
   * builders are cached by it. Every column costs SQLite work per row (bench/README.md, api).
   */
  pageColumns(sort: readonly SortKey[]): readonly string[];
  /** The rows' JSON texts, with the requested relations embedded (one read per relation, not per row). */
  documents(
    handle: ReadHandle,
    rows: readonly Record<string, unknown>[],
    include: ReadonlySet<string>,
  ): string[];
}

function resourceOf(name: ResourceName): Resource {
  const def: ResourceDef = RESOURCES[name];
  const embedders = Object.entries(def.relations).map(([member, relation]) =>
    relationEmbedder(member, relation),
  );
  const pageColumns = new Map<string, readonly string[]>();
  const relationKeys = Object.values(def.relations).flatMap((relation) =>
    relation.cardinality === 'one' ? [relation.key] : [],
  );
  return {
    name,
    table: def.table as PageTable,
    itemParam: def.itemParam,
    operations: RESOURCES[name].operations,
    fields: resourceFields(name),
    relations: Object.fromEntries(
      Object.entries(def.relations).map(([member, relation]) => [member, { scope: relation.scope }]),
    ),
    itemColumns: [...new Set(['_json', 'id', ...relationKeys])],
    pageColumns(sort) {
      const key = sort.map((entry) => entry.column).join(',');
      let columns = pageColumns.get(key);
      if (!columns) {
        columns = [...new Set(['_json', 'id', ...sort.map((entry) => entry.column), ...relationKeys])];
        pageColumns.set(key, columns);
      }
      return columns;
    },
    documents(handle, rows, include) {
      const documents = rows.map((row) => row._json as string);
      for (const embed of embedders) {
        if (include.has(embed.member)) embed(handle, rows, documents);
      }
      return documents;
    },
  };
}

/** Every exported resource, in registry order. */
export const RESOURCE_LIST: readonly Resource[] = RESOURCE_NAMES.map(resourceOf);

const RESOURCE_BY_NAME = new Map<string, Resource>(
  RESOURCE_LIST.map((resource) => [resource.name, resource]),
);

/** The exported resource of that name (every ResourceName has one). */
export function resourceNamed(name: ResourceName): Resource {
  return RESOURCE_BY_NAME.get(name)!;
}
