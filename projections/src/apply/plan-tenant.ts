import type { DeleteChange, TenantTable, TruncateChange, UpsertChange } from '../change.ts';
import { isUuid } from '../paths.ts';
import { coerceRow } from './coerce.ts';
import { type Plan, pushCompanyOp } from './plan.ts';
import type { RouteView } from './route-view.ts';
import { tableSpec } from './table-spec.ts';

/**
 * Planning of tenant-table changes: which company file(s) each one touches (routing without
 * company_id: docs/architecture.md#guarantees).
 *
 * A route records the company a row lives in and the source position at which it got there.
 * A change can move a row only if it is newer than that position; an older change naming another
 * company comes from before the row left that company and is skipped (its file holds a newer
 * tombstone anyway). So duplicates and replays never move a row back.
 */

export function planTenantUpsert(
  plan: Plan,
  view: RouteView,
  change: UpsertChange,
  table: TenantTable,
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  const coerced = coerceRow(tableSpec('company', table), change.row, change.unavailable);
  if (!coerced.ok) return void plan.rejections.push({ change, reason: coerced.reason });
  const id = change.row.id;
  if (typeof id !== 'string' || id === '') {
    return void plan.rejections.push({ change, reason: 'id is not a string' });
  }

  const route = view.get(table, id);
  const named = change.unavailable.includes('company_id') ? undefined : change.row.company_id;
  // Under default REPLICA IDENTITY company_id is always in an update's `after`; the route is the
  // fallback should a decoder ever leave it out.
  const companyId = named ?? route?.companyId;
  if (!isUuid(companyId)) {
    return void plan.rejections.push({ change, reason: 'company_id is missing or not a uuid' });
  }

  if (route === undefined) {
    const tombstone = view.tombstone(table, id);
    if (tombstone !== undefined) {
      // The row was deleted before we knew its company. Now that we do, its tombstone moves to the
      // company file (as if the changes had come in order) and the row gets its route.
      view.setTombstone(table, id, null);
      if (lsn <= tombstone) {
        pushCompanyOp(plan, companyId, { kind: 'delete', table, id, lsn: tombstone, change, derived: true });
        view.set(table, id, { companyId, lsn });
        return void plan.skipped.push(change);
      }
    }
    view.set(table, id, { companyId, lsn });
  } else if (route.companyId !== companyId) {
    if (lsn <= route.lsn) return void plan.skipped.push(change);
    // The row moved: it leaves a tombstone in the old file at the same position.
    pushCompanyOp(plan, route.companyId, { kind: 'delete', table, id, lsn, change, derived: true });
    view.set(table, id, { companyId, lsn });
  }
  pushCompanyOp(plan, companyId, {
    kind: 'upsert',
    table,
    id,
    values: coerced.values,
    missing: coerced.missing,
    lsn,
    change,
    derived: false,
  });
}

/**
 * Key-only delete: the route says which file holds the row. No route = a row we have not seen
 * yet (its create may still come, older, in a reordered replay): an unrouted tombstone in
 * control.sqlite keeps that create out; it moves to the company file when the create shows up.
 */
export function planTenantDelete(
  plan: Plan,
  view: RouteView,
  change: DeleteChange,
  table: TenantTable,
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  const id = change.key.id;
  if (typeof id !== 'string' || id === '') {
    return void plan.rejections.push({ change, reason: 'delete key has no string id' });
  }
  const route = view.get(table, id);
  if (route === undefined) {
    const tombstone = view.tombstone(table, id);
    if (tombstone !== undefined && lsn <= tombstone) return void plan.skipped.push(change);
    view.setTombstone(table, id, lsn);
    return void plan.appliedInControl.push(change);
  }
  pushCompanyOp(plan, route.companyId, { kind: 'delete', table, id, lsn, change, derived: false });
}

/**
 * TRUNCATE reaches every company file (those on disk and those this batch writes) and forgets the
 * table's routes; the floor it leaves makes any older change of that table a no-op afterwards.
 */
export function planTenantTruncate(
  plan: Plan,
  view: RouteView,
  change: TruncateChange,
  table: TenantTable,
  companiesOnDisk: () => readonly string[],
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  view.setFloor(table, lsn);
  view.clear(table);
  view.dropTombstonesUpTo(table, lsn);
  const companies = new Set([...companiesOnDisk(), ...plan.companies.keys()]);
  for (const companyId of companies)
    pushCompanyOp(plan, companyId, { kind: 'truncate', table, lsn, change, derived: true });
  plan.control.push({ kind: 'truncate', table, lsn, change });
}
