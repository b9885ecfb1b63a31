import type { PageTable, PageTableRows, ReadHandle } from '@pda/projections';
import { RESOURCES, type ResourceName } from '@pda/schemas/registry';

/**
 * How one exported resource maps onto its projection table: the member names `fields[<name>]`
 * accepts, the relations `include` accepts (each with the extra scope it needs), and how rows
 * become the contract's JSON shapes. Name, table, fields and relations come from the table registry
 * (@pda/schemas/registry; member order follows the tables of docs/public-data-api-v1.md).
 */

export type Json = Record<string, unknown>;

export interface Relation {
  /** Scope needed on top of the resource's own (an included resource needs its scope: api/README.md). */
  readonly scope: string | undefined;
}

export interface Resource<T extends PageTable = PageTable> {
  /** Collection name: the `<resource>` of `fields[<resource>]` and part of the cursor binding. */
  readonly name: string;
  readonly table: T;
  /** Every member a response may carry, relations included (`id` is always returned). */
  readonly fields: readonly string[];
  readonly relations: Readonly<Record<string, Relation>>;
  /** Rows to JSON, with the requested relations embedded (one query per relation, not per row). */
  present(handle: ReadHandle, rows: readonly PageTableRows[T][], include: ReadonlySet<string>): Json[];
}

export function money(amount: string, currency: string): { amount: string; currency: string } {
  return { amount, currency };
}

/** A resource's name, table, fields and relations as the table registry declares them. */
export function registered<R extends ResourceName>(
  name: R,
): Pick<Resource<(typeof RESOURCES)[R]['table']>, 'name' | 'table' | 'fields' | 'relations'> {
  const { table, fields, relations } = RESOURCES[name];
  return {
    name,
    table,
    fields,
    relations: Object.fromEntries(
      Object.entries(relations).map(([relation, def]) => [
        relation,
        { scope: 'scope' in def ? def.scope : undefined },
      ]),
    ),
  };
}
