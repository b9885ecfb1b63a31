import type { Change, DeleteChange, TenantTable, TruncateChange, UpsertChange } from '../../model/change.ts';
import { isUuid } from '../../model/paths.ts';
import { tableSpec } from '../files/table-spec.ts';
import { coerceRow } from './coerce.ts';
import type { KnownValues } from './known-values.ts';
import { type CompanyOp, type Plan, pushCompanyOp } from './plan.ts';
import type { RouteView } from './route-view.ts';

type UpsertOp = Extract<CompanyOp, { kind: 'upsert' }>;

/**
 * Planning of tenant-table changes: which company file(s) each one touches (routing without
 * company_id: docs/architecture.md#guarantees).
 *
 * A route records the company a row lives in and the source position at which it got there.
 * A change can move a row only if it is newer than that position; an older change naming another
 * company comes from before the row left that company and is skipped (its file holds a newer
 * tombstone anyway). So duplicates and replays never move a row back.
 */

/**
 * 'cut': nothing was planned for the change, because the file its moved row's values are read from
 * must already commit after the receiving file (a cycle, e.g. two rows swapping companies): the
 * batch is cut before it (apply-batch.ts).
 */
export function planTenantUpsert(
  plan: Plan,
  view: RouteView,
  known: KnownValues,
  change: UpsertChange,
  table: TenantTable,
  deferMovesOutOf?: (companyId: string) => boolean,
): 'planned' | 'cut' {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return skip(plan, change);
  const spec = tableSpec('company', table);
  const coerced = coerceRow(spec, change.row, change.unavailable);
  if (!coerced.ok) return reject(plan, change, coerced.reason);
  const id = change.row.id;
  if (typeof id !== 'string' || id === '') return reject(plan, change, 'id is not a string');

  const route = view.get(table, id);
  const named = change.unavailable.includes('company_id') ? undefined : change.row.company_id;
  // Under default REPLICA IDENTITY company_id is always in an update's `after`; the route is the
  // fallback should a decoder ever leave it out.
  const companyId = named ?? route?.companyId;
  if (!isUuid(companyId)) return reject(plan, change, 'company_id is missing or not a uuid');

  const row = known.after(spec, id, lsn, coerced.values, coerced.missing, route?.companyId);
  let op: UpsertOp = {
    kind: 'upsert',
    table,
    id,
    values: coerced.values,
    missing: coerced.missing,
    lsn,
    change,
    derived: false,
  };
  if (route === undefined) {
    const tombstone = view.tombstone(table, id);
    if (tombstone !== undefined) {
      // The row was deleted before we knew its company. Now that we do, its tombstone moves to the
      // company file (as if the changes had come in order) and the row gets its route.
      view.setTombstone(table, id, null);
      if (lsn <= tombstone) {
        pushCompanyOp(plan, companyId, { kind: 'delete', table, id, lsn: tombstone, change, derived: true });
        // At the delete's position, as a routed delete leaves it (planTenantDelete).
        view.set(table, id, { companyId, lsn: tombstone });
        known.deleted(table, id, tombstone);
        return skip(plan, change);
      }
    }
    view.set(table, id, { companyId, lsn });
  } else if (route.companyId !== companyId) {
    if (lsn <= route.lsn) return skip(plan, change);
    // The file it leaves is out of service (damaged): its columns cannot be carried from it. The
    // row stays routed there and the move waits for that company's rebuild, which replays it
    // with every column (ingest/src/rebuild/company-rebuild.ts); later changes of the row wait too.
    if (deferMovesOutOf?.(route.companyId)) return skip(plan, change);
    // The row moves with every column: those the change could not carry come from the batch's
    // earlier upserts of the row, or from the file that held it before the batch (apply-company.ts
    // readCarried), which must then commit after this one.
    const carry =
      row.origin !== undefined && row.unknown.length > 0
        ? { from: row.origin, columns: row.unknown }
        : undefined;
    if (carry !== undefined && carry.from !== companyId) {
      if (reaches(plan, carry.from, companyId)) return 'cut';
      addPrecedes(plan, companyId, carry.from);
    }
    op = { ...op, values: row.values, missing: row.unknown, ...(carry && { carry }) };
    // The row moved: it leaves a tombstone in the old file at the same position.
    pushCompanyOp(plan, route.companyId, { kind: 'delete', table, id, lsn, change, derived: true });
    view.set(table, id, { companyId, lsn });
  }
  known.set(table, id, row);
  pushCompanyOp(plan, companyId, op);
  return 'planned';
}

function skip(plan: Plan, change: Change): 'planned' {
  plan.skipped.push(change);
  return 'planned';
}

function reject(plan: Plan, change: Change, reason: string): 'planned' {
  plan.rejections.push({ change, reason });
  return 'planned';
}

/** Whether `from`'s transaction must already precede `to`'s (directly or through others). */
function reaches(plan: Plan, from: string, to: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  for (let company = stack.pop(); company !== undefined; company = stack.pop()) {
    if (company === to) return true;
    if (seen.has(company)) continue;
    seen.add(company);
    for (const next of plan.precedes.get(company) ?? []) stack.push(next);
  }
  return false;
}

function addPrecedes(plan: Plan, first: string, then: string): void {
  let after = plan.precedes.get(first);
  if (!after) {
    after = new Set();
    plan.precedes.set(first, after);
  }
  after.add(then);
}

/**
 * Key-only delete: the route says which file holds the row. No route = a row we have not seen
 * yet (its create may still come, older, in a reordered replay): an unrouted tombstone in
 * control.sqlite keeps that create out; it moves to the company file when the create shows up.
 */
export function planTenantDelete(
  plan: Plan,
  view: RouteView,
  known: KnownValues,
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
    known.deleted(table, id, lsn);
    return void plan.appliedInControl.push(change);
  }
  known.deleted(table, id, lsn);
  pushCompanyOp(plan, route.companyId, { kind: 'delete', table, id, lsn, change, derived: false });
  // The route's position follows the delete: a move older than it (a reordered replay) names
  // another company at a position the row has already left, and must not recreate it there.
  if (lsn > route.lsn) view.set(table, id, { companyId: route.companyId, lsn });
}

/**
 * TRUNCATE reaches every company file (those on disk and those this batch writes) and forgets the
 * table's routes; the floor it leaves makes any older change of that table a no-op afterwards.
 */
export function planTenantTruncate(
  plan: Plan,
  view: RouteView,
  known: KnownValues,
  change: TruncateChange,
  table: TenantTable,
  companiesOnDisk: () => readonly string[],
): void {
  const lsn = change.position.lsn;
  if (lsn <= view.floor(table)) return void plan.skipped.push(change);
  view.setFloor(table, lsn);
  view.clear(table);
  known.truncated(table);
  view.dropTombstonesUpTo(table, lsn);
  const companies = new Set([...companiesOnDisk(), ...plan.companies.keys()]);
  for (const companyId of companies)
    pushCompanyOp(plan, companyId, { kind: 'truncate', table, lsn, change, derived: true });
  plan.control.push({ kind: 'truncate', table, lsn, change });
}
