import { openControlWriter } from '../handles.ts';
import type { ProjectionDb } from '../open.ts';
import type { StatementBound } from '../statement-lru.ts';
import { CompanyFaults } from './company-faults.ts';
import { DEFAULT_DEAD_LETTER_LIMITS, type DeadLetterLimits } from './dead-letters.ts';
import { StatementCache } from './statement-cache.ts';

/** A company's routing entry: the file a tenant row lives in, and since which source position. */
export interface Route {
  readonly companyId: string;
  readonly lsn: number;
}

/**
 * The open control.sqlite writer: statements, TRUNCATE floors (exact in memory: one writer;
 * reloaded after a rolled-back transaction) and route lookups.
 */
export class ControlFile {
  readonly statements: StatementCache;
  readonly floors = new Map<string, number>();
  /**
   * Whether `tombstones` may hold unrouted tenant tombstones: while it does not (the usual case),
   * planning never looks them up. Set when one is written; exact again after reload().
   */
  hasUnroutedTombstones = false;
  /** Companies out of service and the companies whose file must exist (company-faults.ts). */
  readonly faults: CompanyFaults;
  /** How many dead letters the file keeps, and how long (dead-letters.ts). */
  readonly deadLetterLimits: DeadLetterLimits;

  constructor(
    dataDir: string,
    statements?: StatementBound,
    deadLetterLimits: DeadLetterLimits = DEFAULT_DEAD_LETTER_LIMITS,
  ) {
    this.deadLetterLimits = deadLetterLimits;
    this.statements = new StatementCache(openControlWriter(dataDir), statements?.max, statements?.counts);
    this.faults = new CompanyFaults(this.db, dataDir);
    this.reload();
  }

  get db(): ProjectionDb {
    return this.statements.db;
  }

  route(table: string, id: string): Route | undefined {
    const row = this.statements
      .get('routes:get', () => 'SELECT company_id, _src_lsn FROM routes WHERE table_name = ? AND id = ?')
      .raw()
      .get(table, id) as [string, number] | undefined;
    return row && { companyId: row[0], lsn: row[1] };
  }

  /**
   * The stored routes of many rows in one statement (a batch's worth): one B-tree seek per id as
   * with route(), without a native call per row.
   */
  routes(table: string, ids: readonly string[]): Map<string, Route> {
    const found = new Map<string, Route>();
    if (ids.length === 0) return found;
    const rows = this.statements
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
  unroutedTombstones(table: string, ids: readonly string[]): Map<string, number> {
    const found = new Map<string, number>();
    if (ids.length === 0) return found;
    const rows = this.statements
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

  reload(): void {
    this.faults?.reload();
    this.hasUnroutedTombstones =
      this.db
        .prepare(
          `SELECT 1 FROM tombstones
           WHERE table_name NOT IN ('companies', 'api_keys', 'api_key_companies') LIMIT 1`,
        )
        .get() !== undefined;
    this.floors.clear();
    for (const row of this.db.prepare('SELECT table_name, _src_lsn FROM truncations').raw().all() as [
      string,
      number,
    ][]) {
      this.floors.set(row[0], row[1]);
    }
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}
