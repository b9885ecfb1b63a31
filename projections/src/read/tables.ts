/**
 * The company-file tables the api pages over and their columns, derived from the table registry
 * (@pda/schemas/registry; migrations/company/*.sql create them and a consistency test keeps the
 * two equal). Bookkeeping columns (_src_lsn, _changed_us) are never read.
 */
import {
  columnNames,
  RESOURCE_NAMES,
  RESOURCES,
  type ResourceName,
  type ResourceTableName,
  type RowOf,
} from '@pda/schemas/registry';

/** The tables an exported resource pages over. */
export type PageTable = ResourceTableName;

export type PageTableRows = { [T in PageTable]: RowOf<T> };

/** Columns a page may be ordered by; all NOT NULL and indexed as (column, id). */
export type SortColumn = (typeof RESOURCES)[ResourceName]['sort'][number];
export const SORT_COLUMNS: readonly SortColumn[] = [
  ...new Set(RESOURCE_NAMES.flatMap((resource): readonly SortColumn[] => RESOURCES[resource].sort)),
];

/** The selected columns per pageable table (the whitelist every generated statement draws from). */
export const PAGE_TABLE_COLUMNS: { readonly [T in PageTable]: readonly (keyof PageTableRows[T])[] } =
  Object.fromEntries(
    RESOURCE_NAMES.map((resource) => [RESOURCES[resource].table, columnNames(RESOURCES[resource].table)]),
  ) as { readonly [T in PageTable]: readonly (keyof PageTableRows[T])[] };
