/**
 * The typed change that ingest decodes Debezium events into and projections apply.
 * Decoding happens once, at the edge (ingest); everything after it works on this union.
 */

/** The captured source tables (PostgreSQL `public.<table>`). */
export const SOURCE_TABLES = [
  'companies',
  'api_keys',
  'api_key_companies',
  'sites',
  'site_contacts',
  'services',
  'equipment_categories',
  'equipment',
  'consumables',
] as const;
export type SourceTable = (typeof SOURCE_TABLES)[number];

/** Tables whose rows live in a company file (they carry company_id in the source). */
export const TENANT_TABLES = [
  'sites',
  'site_contacts',
  'services',
  'equipment_categories',
  'equipment',
  'consumables',
] as const satisfies readonly SourceTable[];
export type TenantTable = (typeof TENANT_TABLES)[number];

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
