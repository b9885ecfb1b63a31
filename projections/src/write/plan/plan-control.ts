import type { DeleteChange, Row, TruncateChange, UpsertChange } from '../../model/change.ts';
import { isUuid } from '../../model/paths.ts';
import { type TableSpec, tableSpec } from '../files/table-spec.ts';
import { coerceRow } from './coerce.ts';
import type { ControlTable, Plan } from './plan.ts';
import type { RouteView } from './route-view.ts';

/**
 * Planning of control-table changes (companies, api_keys, api_key_companies). They are applied in
 * control.sqlite with the same version guard as tenant rows; tombstone ids are the key columns
 * joined with '/' (api_key_companies: 'api_key_id/company_id').
 */

export function planControlUpsert(
  plan: Plan,
  view: RouteView,
  change: UpsertChange,
  table: ControlTable,
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  const spec = tableSpec('control', table);
  const coerced = coerceRow(spec, change.row, change.unavailable);
  if (!coerced.ok) return void plan.rejections.push({ change, reason: coerced.reason });
  const key = keyOf(spec, change.row);
  if (key === undefined) return void plan.rejections.push({ change, reason: 'key columns are not strings' });
  // A company id names a file (companies/<id>.sqlite): only uuids get one.
  if (table === 'companies' && !isUuid(key[0])) {
    return void plan.rejections.push({ change, reason: 'company id is not a uuid' });
  }
  plan.control.push({
    kind: 'upsert',
    table,
    key: key.join('/'),
    values: coerced.values,
    missing: coerced.missing,
    lsn,
    change,
  });
}

export function planControlDelete(
  plan: Plan,
  view: RouteView,
  change: DeleteChange,
  table: ControlTable,
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  const key = keyOf(tableSpec('control', table), change.key);
  if (key === undefined)
    return void plan.rejections.push({ change, reason: 'delete key columns are not strings' });
  plan.control.push({ kind: 'delete', table, key: key.join('/'), keyValues: key, lsn, change });
}

export function planControlTruncate(
  plan: Plan,
  view: RouteView,
  change: TruncateChange,
  table: ControlTable,
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  view.setFloor(table, lsn);
  plan.control.push({ kind: 'truncate', table, lsn, change });
}

function keyOf(spec: TableSpec, row: Row): string[] | undefined {
  const key: string[] = [];
  for (const column of spec.pk) {
    const value = row[column];
    if (typeof value !== 'string' || value === '') return undefined;
    key.push(value);
  }
  return key;
}
