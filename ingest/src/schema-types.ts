/**
 * Column types per table from schemas/<table>.avsc via @pda/schemas, loaded once at start-up.
 * They are only needed for events WITHOUT inline schemas (decimal scale, timestamp columns); if the
 * schemas cannot be loaded the process still runs and such events dead-letter with a clear reason.
 */
import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';
import type { Logger } from 'pino';
import { type ColumnType, columnTypesFromAvsc } from './decode/index.ts';

export type AvscTypes = (table: SourceTable) => ReadonlyMap<string, ColumnType> | undefined;

export async function loadAvscTypes(logger?: Logger): Promise<AvscTypes> {
  const types = new Map<SourceTable, ReadonlyMap<string, ColumnType>>();
  try {
    const { loadTableSchema } = await import('@pda/schemas');
    for (const table of SOURCE_TABLES) types.set(table, columnTypesFromAvsc(loadTableSchema(table)));
  } catch (error) {
    logger?.warn({ err: String(error) }, 'table .avsc schemas not loaded: events need inline schemas');
  }
  return (table) => types.get(table);
}
