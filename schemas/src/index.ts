// @pda/schemas: the Avro description of each captured table's row (schemas/<table>.avsc).

export { type ColumnKind, type ColumnSpec, columnsOf } from './columns.ts';
export {
  bigintFromTwosComplement,
  bytesToDecimal,
  decimalText,
  decimalToBytes,
  twosComplementBytes,
  unscaledOf,
} from './decimal-bytes.ts';
export {
  type AvroRecordSchema,
  decimalScale,
  loadTableSchema,
  parseAvsc,
  SCHEMAS_DIR,
  type TableSchema,
} from './load.ts';
export { DecimalType, UuidType, ZONED_TIMESTAMP, ZonedTimestampType } from './logical-types.ts';
export * from './registry.ts';
export { CAPTURED_TABLES, type CapturedTable, isCapturedTable } from './tables.ts';
