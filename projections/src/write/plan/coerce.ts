import type { ColumnValue, Row } from '../../model/change.ts';
import type { ColumnSpec, TableSpec } from '../files/table-spec.ts';

/**
 * Source row → values for a projection table's columns, in TableSpec.columns order.
 * Columns the source could not provide (listed `unavailable`, or absent) are reported in `missing`:
 * an update keeps the stored value, an insert gets the type's empty value (see README).
 * Anything that would make SQLite reject the row (null in NOT NULL, non-numeric REAL) is refused
 * here, before any transaction, so one bad row can never abort a batch.
 */

export type SqlValue = string | number | null;

export type Coerced =
  | { readonly ok: true; readonly values: SqlValue[]; readonly missing: readonly string[] }
  | { readonly ok: false; readonly reason: string };

const NONE: readonly string[] = [];

export function coerceRow(spec: TableSpec, row: Row, unavailable: readonly string[]): Coerced {
  const values: SqlValue[] = new Array(spec.columns.length);
  let missing: string[] | undefined;
  for (let i = 0; i < spec.columns.length; i++) {
    const column = spec.columns[i]!;
    const raw = row[column.name];
    if (raw === undefined || unavailable.includes(column.name)) {
      if (spec.pk.includes(column.name)) return { ok: false, reason: `missing key column ${column.name}` };
      if (missing === undefined) missing = [];
      missing.push(column.name);
      values[i] = emptyValue(column);
      continue;
    }
    const value = coerceValue(column, raw);
    if (value === undefined) {
      return { ok: false, reason: `invalid value for ${spec.table}.${column.name} (${column.type})` };
    }
    values[i] = value;
  }
  return { ok: true, values, missing: missing ?? NONE };
}

/** undefined = not representable in the column. */
export function coerceValue(column: ColumnSpec, raw: ColumnValue): SqlValue | undefined {
  if (raw === null) return column.notNull ? undefined : null;
  switch (column.type) {
    case 'TEXT':
      if (typeof raw === 'string') return raw;
      // text[] (api_keys.scopes) is stored as a JSON array; analysts can use json_each on it.
      if (Array.isArray(raw)) return JSON.stringify(raw);
      return String(raw);
    case 'REAL': {
      const n =
        typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      return Number.isFinite(n) ? n : undefined;
    }
    case 'INTEGER': {
      const n =
        typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      return Number.isSafeInteger(n) ? n : typeof raw === 'boolean' ? Number(raw) : undefined;
    }
  }
}

function emptyValue(column: ColumnSpec): SqlValue {
  if (!column.notNull) return null;
  return column.type === 'TEXT' ? '' : 0;
}
