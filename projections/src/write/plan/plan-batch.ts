import { type Change, CONTROL_TABLES, TENANT_TABLES, type TenantTable } from '../../model/change.ts';
import { listCompanyFiles } from '../../model/paths.ts';
import type { ControlFile } from '../files/control-file.ts';
import { KnownValues } from './known-values.ts';
import { emptyPlan, type Plan } from './plan.ts';
import { planControlDelete, planControlTruncate, planControlUpsert } from './plan-control.ts';
import { planTenantDelete, planTenantTruncate, planTenantUpsert } from './plan-tenant.ts';
import { RouteView } from './route-view.ts';

const TENANT = new Set<string>(TENANT_TABLES);
const CONTROL = new Set<string>(CONTROL_TABLES);

function isTenant(table: string): table is TenantTable {
  return TENANT.has(table);
}

/** One route query per tenant table for the whole batch instead of one per change. */
function prefetchRoutes(view: RouteView, changes: readonly Change[]): void {
  const ids = new Map<TenantTable, string[]>();
  for (const change of changes) {
    if (change.kind === 'truncate' || !TENANT.has(change.table)) continue;
    const id = change.kind === 'upsert' ? change.row?.id : change.key?.id;
    if (typeof id !== 'string') continue;
    const table = change.table as TenantTable;
    let list = ids.get(table);
    if (!list) {
      list = [];
      ids.set(table, list);
    }
    list.push(id);
  }
  for (const [table, list] of ids) view.prefetch(table, list);
}

function shapeProblem(change: Change): string | undefined {
  const lsn = change.position?.lsn;
  if (!Number.isSafeInteger(lsn) || lsn < 0) return 'position.lsn is not a non-negative integer';
  if (change.kind === 'upsert') {
    if (typeof change.row !== 'object' || change.row === null) return 'row is not an object';
    if (!Array.isArray(change.unavailable)) return 'unavailable is not an array';
  } else if (change.kind === 'delete' && (typeof change.key !== 'object' || change.key === null)) {
    return 'key is not an object';
  }
  return undefined;
}

/**
 * Decides every write of a batch, in batch order, reading only control.sqlite (see plan.ts). Stops
 * before a change that would make the order of the company transactions cyclic (`plan.planned`).
 */
export function planBatch(
  changes: readonly Change[],
  control: ControlFile,
  dataDir: string,
  deferMovesOutOf?: (companyId: string) => boolean,
): Plan {
  const plan = emptyPlan();
  const view = new RouteView(control, plan);
  const known = new KnownValues();
  prefetchRoutes(view, changes);
  let onDisk: string[] | undefined;
  const companiesOnDisk = () => {
    if (onDisk === undefined) onDisk = listCompanyFiles(dataDir);
    return onDisk;
  };

  for (const change of changes) {
    plan.planned++;
    const table = change.table;
    // Ingest's decoder is typed, but the apply path must survive anything: refuse, never throw.
    if (!TENANT.has(table) && !CONTROL.has(table)) {
      plan.rejections.push({ change, reason: `unknown table ${String(table).slice(0, 64)}` });
      continue;
    }
    const problem = shapeProblem(change);
    if (problem !== undefined) {
      plan.rejections.push({ change, reason: problem });
      continue;
    }
    switch (change.kind) {
      case 'upsert':
        if (!isTenant(table)) planControlUpsert(plan, view, change, table);
        else if (planTenantUpsert(plan, view, known, change, table, deferMovesOutOf) === 'cut') {
          plan.planned--;
          return plan;
        }
        break;
      case 'delete':
        if (isTenant(table)) planTenantDelete(plan, view, known, change, table);
        else planControlDelete(plan, view, change, table);
        break;
      case 'truncate':
        if (isTenant(table)) planTenantTruncate(plan, view, known, change, table, companiesOnDisk);
        else planControlTruncate(plan, view, change, table);
        break;
      default:
        // Exhaustive: a new Change kind must be handled here before it compiles.
        change satisfies never;
    }
  }
  return plan;
}
