/**
 * Per-table column types from the .avsc files, loaded once per table and cached. The loader
 * (`loadTableSchema` of @pda/schemas) is passed in so the decoder stays pure and testable.
 */
import type { SourceTable } from '@pda/projections';
import { columnTypesFromAvsc } from './avsc-column-types.ts';
import type { ColumnType } from './column-type.ts';

export type TableSchemaLoader = (table: SourceTable) => unknown;

export function avscTypesLoader(
  load: TableSchemaLoader,
): (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined {
  const cache = new Map<SourceTable, ReadonlyMap<string, ColumnType> | undefined>();
  return (table) => {
    if (!cache.has(table)) {
      let types: ReadonlyMap<string, ColumnType> | undefined;
      try {
        types = columnTypesFromAvsc(load(table));
      } catch {
        types = undefined; // no .avsc: events must then carry inline schemas for decimals
      }
      cache.set(table, types);
    }
    return cache.get(table);
  };
}
