// The reconcile tool's public types: what a caller passes and the report it gets back
// (docs/operations.md, "Reconcile a projection with the source").
import type pg from 'pg';

export type DifferenceKind = 'missing' | 'extra' | 'different';

/** One column that differs, each side in the projection's representation. */
export interface ColumnDifference {
  readonly name: string;
  /** PostgreSQL's value mapped to the projection's representation (absent column: undefined). */
  readonly source: unknown;
  readonly projection: unknown;
}

/**
 * A row that differs. `missing`: in PostgreSQL, not in the projection; `extra`: in the projection,
 * not in PostgreSQL; `different`: in both, with the columns that differ (`_json` is the stored
 * export document, compared with the one rendered from PostgreSQL's row).
 */
export interface Difference {
  /** The company the row belongs to; null for api_keys (a key may serve several companies). */
  readonly companyId: string | null;
  readonly table: string;
  /** The row's primary key; api_key_companies: `<api_key_id>/<company_id>`. */
  readonly id: string;
  readonly kind: DifferenceKind;
  readonly columns?: readonly ColumnDifference[];
}

/** Rows read from each side for one table of one company (or the control tables). */
export interface TableCount {
  readonly table: string;
  readonly sourceRows: number;
  readonly projectionRows: number;
}

/** A PostgreSQL position: the WAL position (LSN) and PostgreSQL's clock when the snapshot was taken. */
export interface SourcePosition {
  readonly lsn: string;
  readonly at: string;
}

export interface CompanyReport {
  readonly companyId: string;
  readonly tables: readonly TableCount[];
  readonly sourceRows: number;
  readonly projectionRows: number;
  /** Differences of this company (confirmed ones; in-flight rows that settled are not counted). */
  readonly differences: number;
  /** The snapshot the company was read in. */
  readonly snapshot: SourcePosition;
}

export interface ReconcileTotals {
  readonly companies: number;
  readonly tables: number;
  readonly sourceRows: number;
  readonly projectionRows: number;
  readonly differences: number;
  readonly missing: number;
  readonly extra: number;
  readonly different: number;
  /** Rows still differing when the wait bound ran out (not confirmed, not settled). */
  readonly unsettled: number;
}

export interface ReconcileReport {
  /** True when there is no difference and nothing was left unsettled. */
  readonly ok: boolean;
  /**
   * Every change committed in PostgreSQL before this position was compared: its rows are equal in
   * the projection or listed in `differences`. Null when the run did not settle (`notCaughtUp`).
   */
  readonly verifiedThrough: SourcePosition | null;
  readonly companies: readonly CompanyReport[];
  /** companies, api_keys and api_key_companies of control.sqlite, for the companies checked. */
  readonly control: { readonly tables: readonly TableCount[]; readonly snapshot: SourcePosition };
  /** Confirmed differences, ordered by company, table, id. */
  readonly differences: readonly Difference[];
  /**
   * Rows that differed and could not be confirmed or cleared within the wait bound because the
   * projection had not caught up with the source (they may be in flight). Not counted as differences.
   */
  readonly unsettled: readonly Difference[];
  /** Why the run did not settle; null when it did. */
  readonly notCaughtUp: NotCaughtUp | null;
  readonly totals: ReconcileTotals;
  readonly durationMs: number;
  /** Source rows compared per second by the full pass (reading differing rows again not counted). */
  readonly rowsPerSecond: number;
}

export interface NotCaughtUp {
  readonly reason: string;
  /** The source time the projection had to be known current through (ISO UTC). */
  readonly needed: string;
  /** The source time ingest had recorded as current (control.sqlite), null if none. */
  readonly projectionCurrentAt: string | null;
}

export type ReconcileProgress =
  /** Every `progressRows` rows of a table, and once at its end (`done`). */
  | {
      readonly kind: 'table';
      readonly companyId: string | null;
      readonly table: string;
      readonly rows: number;
      readonly done: boolean;
    }
  | {
      readonly kind: 'company';
      readonly companyId: string;
      readonly index: number;
      readonly count: number;
      readonly rows: number;
      readonly candidates: number;
    }
  /** Rows that differed in the first pass are read again (each round). */
  | { readonly kind: 'recheck'; readonly round: number; readonly rows: number; readonly waitingFor?: string };

export interface ReconcileOptions {
  /** The source: a pool (a client is borrowed and released) or connection settings. */
  readonly pg: pg.Pool | pg.ClientConfig;
  /** The PostgreSQL schema of the captured tables (default `public`). */
  readonly sourceSchema?: string;
  /** The projection's data directory (control.sqlite and companies/). */
  readonly dataDir: string;
  /** Companies to check; default: every company in PostgreSQL and every company file in dataDir. */
  readonly companies?: readonly string[];
  /**
   * How long to wait, in total, for differing rows to settle (ms, default 60,000): for the
   * projection to catch up with the source position they were read at. 0: no waiting.
   */
  readonly waitMs?: number;
  /** Allowed clock difference between PostgreSQL and Kafka Connect (ms, default 1,000). */
  readonly clockMarginMs?: number;
  /** Rows per read from each side (default 5,000). */
  readonly batchRows?: number;
  /** Rows between two 'table' progress events (default 50,000). */
  readonly progressRows?: number;
  readonly onProgress?: (progress: ReconcileProgress) => void;
  readonly signal?: AbortSignal;
}
