import type { SourceTable } from '../../model/change.ts';
import type { CompanyFault } from '../../read/company-faults.ts';
import type { FileCacheCounts } from '../files/company-files.ts';
import type { Rejection } from '../plan/plan.ts';

export interface TableCounts {
  applied: number;
  skipped: number;
  rejected: number;
}

/** What applyBatch did; ingest logs it as one line and feeds its metrics from it. */
export interface BatchResult {
  /** Per source table: changes applied, skipped by a version guard, refused as invalid. */
  readonly tables: Readonly<Partial<Record<SourceTable, Readonly<TableCounts>>>>;
  readonly applied: number;
  readonly skipped: number;
  readonly rejected: number;
  /** Company files written in this batch (each one short transaction). */
  readonly companies: number;
  /**
   * The writer's file cache during this batch: files opened and evicted by it, files open after it
   * and the bound (ingest's metrics: a batch wider than the bound shows as evictions).
   */
  readonly files: FileCacheCounts;
  /**
   * The prepared statements of the writer's open files (statement-lru.ts): dropped to make room
   * during this batch, held after it over every open file, and the bound per file.
   */
  readonly statements: { readonly evicted: number; readonly held: number; readonly maxPerFile: number };
  /** Refused changes (already recorded as dead letters in control.sqlite). */
  readonly rejections: readonly Rejection[];
  /** Dead letters recorded with this batch (ingest's decode failures plus the refused changes). */
  readonly deadLettered: number;
  /** Where the batch's time went: planning (route reads, validation), company files, control. */
  readonly timings: { readonly planMs: number; readonly companiesMs: number; readonly controlMs: number };
  /**
   * Damaged company files: those found during this batch (each taken out of service now), and every
   * company out of service after it (damaged or being rebuilt; company-faults.ts).
   */
  readonly faults: {
    readonly detected: readonly CompanyFault[];
    readonly outOfService: readonly CompanyFault[];
  };
}

export type Outcome = 'applied' | 'skipped' | 'rejected';

export class Tally {
  readonly tables: Partial<Record<SourceTable, TableCounts>> = {};
  applied = 0;
  skipped = 0;
  rejected = 0;

  count(table: SourceTable, outcome: Outcome): void {
    let counts = this.tables[table];
    if (counts === undefined) {
      counts = { applied: 0, skipped: 0, rejected: 0 };
      this.tables[table] = counts;
    }
    counts[outcome]++;
    this[outcome]++;
  }
}
