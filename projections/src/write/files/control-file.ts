import type { ProjectionDb } from '../../model/open.ts';
import type { StatementBound } from '../../model/statement-lru.ts';
import { DEFAULT_DEAD_LETTER_LIMITS, type DeadLetterLimits } from '../upkeep/dead-letters.ts';
import { CompanyFaults } from './company-faults.ts';
import { openControlWriter } from './open-writers.ts';
import { StatementCache } from './statement-cache.ts';

/**
 * The open control.sqlite writer: statements, TRUNCATE floors (exact in memory: one writer;
 * reloaded after a rolled-back transaction). Planning reads its routes (plan/route-view.ts).
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
  /** Whether a company's file belongs in this data directory (a split writer's: store.ts ownedPartitions). */
  ownsCompany: (companyId: string) => boolean = () => true;

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
