import type { TenantTable } from '../../model/change.ts';
import type { ControlFile } from '../files/control-file.ts';
import type { StatementCache } from '../files/statement-cache.ts';
import type { Plan, Route } from './plan.ts';

/**
 * Routes and TRUNCATE floors as the batch sees them while it is planned: what this batch decided
 * so far, over what control.sqlite holds. Nothing is written here; the plan carries the result.
 */
export class RouteView {
  readonly #control: ControlFile;
  readonly #plan: Plan;
  readonly #floors = new Map<string, number>();
  /** Stored routes read ahead for the batch's ids (see prefetch). */
  readonly #stored = new Map<TenantTable, Map<string, Route>>();
  /** Stored unrouted tombstones read ahead for the batch's ids (only when control has any). */
  readonly #storedTombstones = new Map<TenantTable, Map<string, number>>();

  constructor(control: ControlFile, plan: Plan) {
    this.#control = control;
    this.#plan = plan;
  }

  /** Reads the stored routes of `ids` in one statement; later get()s of them need no SQLite call. */
  prefetch(table: TenantTable, ids: readonly string[]): void {
    this.#stored.set(table, storedRoutes(this.#control.statements, table, ids));
    if (this.#control.hasUnroutedTombstones) {
      this.#storedTombstones.set(table, unroutedTombstones(this.#control.statements, table, ids));
    }
  }

  /** Position of the unrouted tombstone of a tenant row without a route (see planTenantDelete). */
  tombstone(table: TenantTable, id: string): number | undefined {
    const local = this.#plan.unrouted.get(table);
    if (local?.has(id)) return local.get(id) ?? undefined;
    if (!this.#control.hasUnroutedTombstones) return undefined;
    const stored = this.#storedTombstones.get(table);
    return stored ? stored.get(id) : unroutedTombstones(this.#control.statements, table, [id]).get(id);
  }

  /** Records (a position) or drops (null) the unrouted tombstone of a row. */
  setTombstone(table: TenantTable, id: string, lsn: number | null): void {
    let tombstones = this.#plan.unrouted.get(table);
    if (!tombstones) {
      tombstones = new Map();
      this.#plan.unrouted.set(table, tombstones);
    }
    tombstones.set(id, lsn);
  }

  get(table: TenantTable, id: string): Route | undefined {
    const local = this.#plan.routes.get(table)?.get(id);
    if (local) return local;
    if (this.#plan.clearedRoutes.has(table)) return undefined;
    const stored = this.#stored.get(table);
    // A prefetched table answers for every id of the batch, absent = no route.
    return stored ? stored.get(id) : storedRoute(this.#control.statements, table, id);
  }

  set(table: TenantTable, id: string, route: Route): void {
    let routes = this.#plan.routes.get(table);
    if (!routes) {
      routes = new Map();
      this.#plan.routes.set(table, routes);
    }
    routes.set(id, route);
  }

  /** A TRUNCATE of a tenant table forgets its routes (stored and planned). */
  clear(table: TenantTable): void {
    this.#plan.routes.delete(table);
    this.#plan.clearedRoutes.add(table);
  }

  /** A TRUNCATE at `lsn` makes the unrouted tombstones at or below it redundant (the floor guards). */
  dropTombstonesUpTo(table: TenantTable, lsn: number): void {
    const local = this.#plan.unrouted.get(table);
    if (!local) return;
    for (const [id, at] of local) if (at !== null && at <= lsn) local.delete(id);
  }

  /** Source position of the last TRUNCATE of `table` (-1 = never): changes at or below are skipped. */
  floor(table: string): number {
    return this.#floors.get(table) ?? this.#control.floors.get(table) ?? -1;
  }

  setFloor(table: string, lsn: number): void {
    this.#floors.set(table, lsn);
  }
}

// ---- what control.sqlite holds -----------------------------------------------------------------

function storedRoute(statements: StatementCache, table: string, id: string): Route | undefined {
  const row = statements
    .get('routes:get', () => 'SELECT company_id, _src_lsn FROM routes WHERE table_name = ? AND id = ?')
    .raw()
    .get(table, id) as [string, number] | undefined;
  return row && { companyId: row[0], lsn: row[1] };
}

/**
 * The stored routes of many rows in one statement (a batch's worth): one B-tree seek per id as
 * with storedRoute(), without a native call per row.
 */
function storedRoutes(statements: StatementCache, table: string, ids: readonly string[]): Map<string, Route> {
  const found = new Map<string, Route>();
  if (ids.length === 0) return found;
  const rows = statements
    .get(
      'routes:many',
      () =>
        `SELECT id, company_id, _src_lsn FROM routes
         WHERE table_name = ? AND id IN (SELECT value FROM json_each(?))`,
    )
    .raw()
    .all(table, JSON.stringify(ids)) as [string, string, number][];
  for (const [id, companyId, lsn] of rows) found.set(id, { companyId, lsn });
  return found;
}

/** Unrouted tombstones (tenant rows deleted before their route existed) of many rows. */
function unroutedTombstones(
  statements: StatementCache,
  table: string,
  ids: readonly string[],
): Map<string, number> {
  const found = new Map<string, number>();
  if (ids.length === 0) return found;
  const rows = statements
    .get(
      'tombstones:many',
      () =>
        `SELECT id, _src_lsn FROM tombstones
         WHERE table_name = ? AND id IN (SELECT value FROM json_each(?))`,
    )
    .raw()
    .all(table, JSON.stringify(ids)) as [string, number][];
  for (const [id, lsn] of rows) found.set(id, lsn);
  return found;
}
