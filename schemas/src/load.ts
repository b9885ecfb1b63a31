// Loads a table's .avsc (the JSON as written and an avsc Type with our logical types), cached.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// avsc is CommonJS: plain Node ESM has only its default export.
import avsc, { type Schema, type Type } from 'avsc';
import { type ColumnSpec, columnsOf } from './columns.ts';
import { DecimalType, UuidType, zonedTimestampHook } from './logical-types.ts';
import { type CapturedTable, isCapturedTable } from './tables.ts';

export const SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface AvroRecordSchema {
  type: 'record';
  name: string;
  namespace: string;
  doc?: string;
  fields: { name: string; type: unknown; doc?: string; default?: unknown; 'pg.type': string }[];
}

export interface TableSchema {
  table: CapturedTable;
  /** the .avsc exactly as written, custom attributes (connect.name, pg.type) included */
  json: AvroRecordSchema;
  /** parsed with logical types: `type.isValid(row)`, `type.random()` */
  type: Type;
  columns: readonly ColumnSpec[];
  /**
   * The raw JSON again, mirroring avsc's `Type#schema()` so code that accepts "JSON or a Type"
   * gets the attributes that avsc's own schema() would drop (connect.name, decimal scale).
   */
  schema(): AvroRecordSchema;
}

const cache = new Map<CapturedTable, TableSchema>();

export function parseAvsc(json: AvroRecordSchema): Type {
  return avsc.Type.forSchema(json as unknown as Schema, {
    logicalTypes: { decimal: DecimalType, uuid: UuidType },
    typeHook: zonedTimestampHook,
    // Every logicalType must resolve to our classes: a typo in an .avsc fails loudly.
    assertLogicalTypes: true,
  });
}

/** Synchronous on purpose: ingest resolves a table's column types while decoding an event. */
export function loadTableSchema(table: string): TableSchema {
  if (!isCapturedTable(table)) throw new Error(`no .avsc for table ${JSON.stringify(table)}`);
  const cached = cache.get(table);
  if (cached) return cached;
  const json = JSON.parse(readFileSync(join(SCHEMAS_DIR, `${table}.avsc`), 'utf8')) as AvroRecordSchema;
  const loaded: TableSchema = {
    table,
    json,
    type: parseAvsc(json),
    columns: columnsOf(json),
    schema: () => json,
  };
  cache.set(table, loaded);
  return loaded;
}

/** The scale of a decimal column (undefined when the column is not a decimal). */
export function decimalScale(table: string, column: string): number | undefined {
  const spec = loadTableSchema(table).columns.find((c) => c.name === column);
  return spec?.kind === 'decimal' ? spec.scale : undefined;
}
