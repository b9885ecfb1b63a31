import type { DeleteChange, Row, SourceTable, TruncateChange, UpsertChange } from '../model/change.ts';

/**
 * Small builders of Changes for tests (here and in the api): projection files for a test are
 * built by applying Changes through ProjectionStore, the same path ingest takes.
 * `tsMs` defaults to a fixed instant so results do not depend on the clock.
 */

/** The source commit time of changes built here unless a test gives one. */
export const FIXTURE_TS_MS = Date.UTC(2026, 0, 31, 12, 0, 0);
const TS_MS = FIXTURE_TS_MS;

export interface UpsertOptions {
  readonly op?: 'c' | 'u' | 'r';
  /** Columns Debezium could not provide (unchanged TOASTed values): they must keep the stored value. */
  readonly unavailable?: readonly string[];
  readonly tsMs?: number;
}

export function makeUpsert(
  table: SourceTable,
  row: Row,
  lsn: number,
  options: UpsertOptions = {},
): UpsertChange {
  const unavailable = options.unavailable ?? [];
  const provided: Record<string, Row[string]> = {};
  for (const [column, value] of Object.entries(row)) {
    if (!unavailable.includes(column)) provided[column] = value;
  }
  return {
    kind: 'upsert',
    op: options.op ?? 'c',
    table,
    key: keyOf(table, row),
    row: provided,
    unavailable,
    position: { lsn, tsMs: options.tsMs ?? TS_MS },
  };
}

/** A key-only delete, as under PostgreSQL's default REPLICA IDENTITY. */
export function makeDelete(table: SourceTable, key: Row, lsn: number, tsMs = TS_MS): DeleteChange {
  return { kind: 'delete', table, key, position: { lsn, tsMs } };
}

export function makeTruncate(table: SourceTable, lsn: number, tsMs = TS_MS): TruncateChange {
  return { kind: 'truncate', table, position: { lsn, tsMs } };
}

function keyOf(table: SourceTable, row: Row): Row {
  if (table === 'api_key_companies') {
    return { api_key_id: row.api_key_id ?? null, company_id: row.company_id ?? null };
  }
  return { id: row.id ?? null };
}
