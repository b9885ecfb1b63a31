import type { PageTable, PageTableRows, ReadHandle } from '@pda/projections';

/**
 * How one exported resource maps onto its projection table: the member names `fields[<name>]`
 * accepts, the relations `include` accepts (each with the extra scope it needs), and how rows
 * become the contract's JSON shapes. Member order follows the tables of docs/public-data-api-v1.md.
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
