import type { Change, DeleteChange, TenantTable, TruncateChange, UpsertChange } from '../../model/change.ts';
import { isUuid } from '../../model/paths.ts';
import { tableSpec } from '../files/table-spec.ts';
import { coerceRow } from './coerce.ts';
import type { KnownValues } from './known-values.ts';
import { type CompanyOp, type Plan, pushCompanyOp, type Route } from './plan.ts';
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
    if (lsn < route.lsn || (lsn === route.lsn && !isMovePairCreate(change, companyId)))
      return skip(plan, change);
    // The file it leaves is out of service (damaged): its columns cannot be carried from it. The
    // row stays routed there and the move waits for that company's rebuild, which replays it
    // with every column (ingest/src/live-rebuild/company-rebuild.ts); later changes of the row wait too.
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

/**
 * The create half of a partitioned move (docs/scaling.md, company-keyed partitions): with
 * `message.key.columns` = (id, company_id), an UPDATE that changes a row's company arrives as a `d`
 * keyed {id, OLD} on the old company's partition and a `c` keyed {id, NEW} with every column on the
 * new one, both at the UPDATE's source.lsn. When one writer applies both partitions they come in
 * either order; if the `d` came first, the route is {OLD, lsn}, and this `c`, at the SAME position,
 * must still move the row. No two other changes of a row share a position (a position is one WAL
 * record), so an upsert at the route's own position naming another company is only ever that `c`;
 * requiring the key to carry the company it names keeps today's unpartitioned path (keys without
 * company_id, a plain `u` moving the row) exactly as it was: there an equal position never moves.
 */
function isMovePairCreate(change: UpsertChange, companyId: string): boolean {
  return change.key.company_id === companyId;
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
  const keyCompany = change.key.company_id;
  if (keyCompany !== undefined && keyCompany !== null) {
    if (!isUuid(keyCompany)) {
      return void plan.rejections.push({ change, reason: 'delete key company_id is not a uuid' });
    }
    planKeyedDelete(plan, view, known, change, table, id, keyCompany, route);
    return;
  }
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
 * A delete whose key carries the company (the partitioned connector: `message.key.columns` =
 * (id, company_id)) deletes the row from THAT company only, whatever the route says. Such a `d` is
 * either a real DELETE (the route names the same company) or the old-company half of a move (the
 * pair above planTenantUpsert's isMovePairCreate): when the `c` of the pair came first (another
 * partition, applied concurrently) or this is a replay, the route already names the new company,
 * and deleting by the route would delete the row from the company that just gained it. The old
 * company gets its tombstone either way (version-guarded: a duplicate is skipped there). The route
 * follows only when it names the same company (or there is none yet): a `c` of the pair at this
 * position then still moves the row (isMovePairCreate), and an older change naming another
 * company cannot bring it back.
 */
function planKeyedDelete(
  plan: Plan,
  view: RouteView,
  known: KnownValues,
  change: DeleteChange,
  table: TenantTable,
  id: string,
  companyId: string,
  route: Route | undefined,
): void {
  const lsn = change.position.lsn;
  if (route === undefined) {
    const tombstone = view.tombstone(table, id);
    if (tombstone !== undefined && lsn <= tombstone) return void plan.skipped.push(change);
    known.deleted(table, id, lsn);
    view.set(table, id, { companyId, lsn });
  } else if (route.companyId === companyId) {
    known.deleted(table, id, lsn);
    if (lsn > route.lsn) view.set(table, id, { companyId, lsn });
  }
  pushCompanyOp(plan, companyId, { kind: 'delete', table, id, lsn, change, derived: false });
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
