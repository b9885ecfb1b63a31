import type { Change, SourceTable, TenantTable, UpsertChange } from '../../model/change.ts';
import type { SqlValue } from './coerce.ts';

/**
 * What one batch does, decided before any write: the operations for each company file (in batch
 * order), the control operations, the final routes, and the changes refused. Building the plan
 * only reads control.sqlite, which is committed last (see apply-batch.ts), so replaying a batch
 * after a crash rebuilds the very same plan.
 */

/** A company's routing entry: the file a tenant row lives in, and since which source position. */
export interface Route {
  readonly companyId: string;
  readonly lsn: number;
}

export type ControlTable = 'companies' | 'api_keys' | 'api_key_companies';

/**
 * Columns a moved row takes from the row stored in the company file it left, read just before the
 * receiving file's transaction (apply-company.ts readCarried): values the change could not carry
 * (unchanged TOASTed columns) and no earlier change of the batch did either.
 */
export interface Carry {
  /** The company file that held the row before the batch. */
  readonly from: string;
  readonly columns: readonly string[];
}

/**
 * `derived` marks operations that follow from another change (a move's delete in the old file, the
 * TRUNCATE fan-out to every file): they are not counted again, but name their change if refused.
 */
export type CompanyOp =
  | {
      readonly kind: 'upsert';
      readonly table: TenantTable;
      readonly id: string;
      readonly values: readonly SqlValue[];
      /** Columns without a value: an insert gets their empty value, an update keeps the stored one. */
      readonly missing: readonly string[];
      readonly lsn: number;
      readonly change: UpsertChange;
      readonly derived: false;
      readonly carry?: Carry;
    }
  | {
      readonly kind: 'delete';
      readonly table: TenantTable;
      readonly id: string;
      readonly lsn: number;
      readonly change: Change;
      readonly derived: boolean;
    }
  | {
      readonly kind: 'truncate';
      readonly table: TenantTable;
      readonly lsn: number;
      readonly change: Change;
      readonly derived: true;
    };

export type ControlOp =
  | {
      readonly kind: 'upsert';
      readonly table: ControlTable;
      /** Tombstone id: the key columns joined with '/'. */
      readonly key: string;
      readonly values: readonly SqlValue[];
      readonly missing: readonly string[];
      readonly lsn: number;
      readonly change: Change;
    }
  | {
      readonly kind: 'delete';
      readonly table: ControlTable;
      readonly key: string;
      readonly keyValues: readonly string[];
      readonly lsn: number;
      readonly change: Change;
    }
  /** Control tables are cleared; for tenant tables only their routes (the files get CompanyOps). */
  | { readonly kind: 'truncate'; readonly table: SourceTable; readonly lsn: number; readonly change: Change };

export interface Rejection {
  readonly change: Change;
  readonly reason: string;
}

export interface Plan {
  readonly companies: Map<string, CompanyOp[]>;
  /**
   * Company → the companies whose transactions must commit after its own: it reads values from
   * their files (its operations' `carry`), and their own operations replace those rows with
   * tombstones. Never cyclic: planning cuts the batch before a change that would close a cycle.
   */
  readonly precedes: Map<string, Set<string>>;
  /**
   * How many of the changes given to planBatch this plan covers: all of them, unless a cycle in
   * `precedes` cut the batch; the rest is planned again after this part committed (apply-batch.ts).
   */
  planned: number;
  readonly control: ControlOp[];
  /** Routes to write, final state per row (after any TRUNCATE of the batch). */
  readonly routes: Map<TenantTable, Map<string, Route>>;
  /** Tenant tables truncated in this batch: their stored routes are deleted before `routes` is written. */
  readonly clearedRoutes: Set<TenantTable>;
  readonly rejections: Rejection[];
  /** Changes skipped while planning (older than a TRUNCATE, a route or an unrouted tombstone). */
  readonly skipped: Change[];
  /**
   * Unrouted tombstones of tenant rows (control.sqlite `tombstones`), final state per row: a
   * position to write, or null to delete the stored one. See planTenantDelete.
   */
  readonly unrouted: Map<TenantTable, Map<string, number | null>>;
  /** Changes whose only write is in control.sqlite (unrouted deletes): counted when it commits. */
  readonly appliedInControl: Change[];
}

export function emptyPlan(): Plan {
  return {
    companies: new Map(),
    precedes: new Map(),
    planned: 0,
    control: [],
    routes: new Map(),
    clearedRoutes: new Set(),
    rejections: [],
    skipped: [],
    unrouted: new Map(),
    appliedInControl: [],
  };
}

export function pushCompanyOp(plan: Plan, companyId: string, op: CompanyOp): void {
  let ops = plan.companies.get(companyId);
  if (!ops) {
    ops = [];
    plan.companies.set(companyId, ops);
  }
  ops.push(op);
}
