/**
 * The typed change that ingest decodes Debezium events into and projections apply.
 * Decoding happens once, at the edge (ingest); everything after it works on this union.
 */

import {
  CONTROL_TABLE_NAMES,
  type ControlTableName,
  TABLE_NAMES,
  type TableName,
  TENANT_TABLE_NAMES,
  type TenantTableName,
} from '@pda/schemas/registry';

/** The captured source tables (PostgreSQL `public.<table>`): the table registry's list. */
export const SOURCE_TABLES: readonly TableName[] = TABLE_NAMES;
export type SourceTable = TableName;

/** Tables whose rows live in a company file (they carry company_id in the source). */
export const TENANT_TABLES: readonly TenantTableName[] = TENANT_TABLE_NAMES;
export type TenantTable = TenantTableName;

/** Tables whose rows live in control.sqlite (companies, keys and their grants). */
export const CONTROL_TABLES: readonly ControlTableName[] = CONTROL_TABLE_NAMES;
export type ControlTable = ControlTableName;

/**
 * A decoded column value: decimals are exact decimal strings ('12.50'), timestamps ISO 8601 UTC
 * strings with microseconds ('2026-01-31T12:00:00.123456Z'), dates 'YYYY-MM-DD', uuids strings,
 * text[] arrays of strings, jsonb the parsed JSON text kept as a string.
 */
export type ColumnValue = string | number | boolean | null | readonly string[];

/** Column name (as in the source table) → decoded value. */
export type Row = Readonly<Record<string, ColumnValue>>;

/** Where a change came from: the per-row version guard compares `lsn`. */
export interface SourcePosition {
  /** Debezium source.lsn: the WAL position of the change (monotonic per row). */
  readonly lsn: number;
  /** Debezium source.ts_ms: when the source transaction committed (freshness metrics). */
  readonly tsMs: number;
}

/** The Kafka message a change was decoded from (dead letters name it; optional for replays/tests). */
export interface MessageOrigin {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offsets are int64: kept as the decimal string kafkajs gives. */
  readonly offset: string;
}

interface ChangeBase {
  readonly table: SourceTable;
  /** Primary-key columns (the Kafka message key). */
  readonly key: Row;
  readonly position: SourcePosition;
  readonly origin?: MessageOrigin;
}

/**
 * Insert or update of a whole row (`c`, `u`, snapshot `r`). Columns whose value Debezium could not
 * provide (`__debezium_unavailable_value`, unchanged TOASTed values under default REPLICA IDENTITY)
 * are absent from `row` and listed in `unavailable`: the stored value must be kept.
 */
export interface UpsertChange extends ChangeBase {
  readonly kind: 'upsert';
  readonly op: 'c' | 'u' | 'r';
  readonly row: Row;
  readonly unavailable: readonly string[];
}

/** Delete (`d`). Under default REPLICA IDENTITY only the key is known: route by the routing index. */
export interface DeleteChange extends ChangeBase {
  readonly kind: 'delete';
}

/** TRUNCATE of a whole source table (`t`); it has no key. */
export interface TruncateChange {
  readonly kind: 'truncate';
  readonly table: SourceTable;
  readonly position: SourcePosition;
  readonly origin?: MessageOrigin;
}

export type Change = UpsertChange | DeleteChange | TruncateChange;
