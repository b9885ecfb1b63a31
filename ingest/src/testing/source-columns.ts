/**
 * The captured tables' columns as Debezium sees them (schemas/<table>.avsc), for building
 * real-shaped events in tests and the benchmark. Kinds: uuid, text, int, decimal(scale),
 * timestamptz, text[].
 */
import { SOURCE_TABLES, type SourceTable } from '@pda/projections/model';
import { type ColumnKind, loadTableSchema, TABLES } from '@pda/schemas';

export type SourceColumnKind = 'uuid' | 'text' | 'int' | 'decimal' | 'timestamptz' | 'text[]';
export interface SourceColumn {
  readonly name: string;
  readonly kind: SourceColumnKind;
  readonly optional?: boolean;
  readonly scale?: number;
  readonly precision?: number;
}

const KIND: Readonly<Record<ColumnKind, SourceColumnKind>> = {
  uuid: 'uuid',
  string: 'text',
  int: 'int',
  decimal: 'decimal',
  'zoned-timestamp': 'timestamptz',
  'string-array': 'text[]',
};

function sourceColumns(table: SourceTable): SourceColumn[] {
  return loadTableSchema(table).columns.map((column) => ({
    name: column.name,
    kind: KIND[column.kind],
    ...(column.nullable ? { optional: true } : {}),
    ...(column.precision === undefined ? {} : { precision: column.precision }),
    ...(column.scale === undefined ? {} : { scale: column.scale }),
  }));
}

/** Read from the .avsc files (schemas/<table>.avsc) of the registry's tables. */
export const SOURCE_COLUMNS: Readonly<Record<SourceTable, readonly SourceColumn[]>> = Object.fromEntries(
  SOURCE_TABLES.map((table) => [table, sourceColumns(table)]),
) as unknown as Record<SourceTable, readonly SourceColumn[]>;

/** The registry's primary keys (the Kafka message key columns). */
export const PRIMARY_KEYS: Readonly<Record<SourceTable, readonly string[]>> = Object.fromEntries(
  SOURCE_TABLES.map((table) => [table, TABLES[table].primaryKey]),
) as unknown as Record<SourceTable, readonly string[]>;
