import { quoteIdent } from '../../model/quote-ident.ts';
import type { CompanyFiles } from '../files/company-files.ts';
import type { ControlFile } from '../files/control-file.ts';
import { tableSpec, upsertStatement } from '../files/table-spec.ts';
import { removeTombstone, tombstoneLsn, writeControlTombstone } from '../files/tombstones.ts';
import type { ControlOp, Plan, Rejection } from '../plan/plan.ts';
import { type DeadLetter, insertDeadLetters } from '../upkeep/dead-letters.ts';
import { isDataError } from './apply-company.ts';
import type { Outcome, Tally } from './result.ts';

export interface ControlBatch {
  readonly plan: Plan;
  /** Refused changes found so far (planning and company files); control refusals are added. */
  readonly rejections: Rejection[];
  readonly deadLetters: readonly DeadLetter[];
  /** Changes applied in company files, for ingest_state.events_applied_total. */
  readonly appliedElsewhere: number;
  readonly maxSourceTsMs: number | undefined;
  /** ApplyOptions.sourceCurrentAtMs: kept as the maximum seen. */
  readonly sourceCurrentAtMs?: number | undefined;
  readonly nowMs: number;
  /** Company files the batch wrote: recorded in company_files (their loss is then detected). */
  readonly written?: readonly string[];
}

/**
 * The control transaction of a batch, committed after every company file (see apply-batch.ts):
 * control-table changes, routes, TRUNCATE floors, dead letters and ingest_state together.
 * Each control change runs in a savepoint: one refused by SQLite (say, two keys with one hash
 * while events for different rows arrive out of order) becomes a dead letter, not a stuck batch.
 */
export function applyControl(
  control: ControlFile,
  files: CompanyFiles,
  batch: ControlBatch,
  tally: Tally,
): void {
  const { plan, rejections } = batch;
  const { db, statements } = control;
  const single = db.transaction((op: Plan['control'][number]) => applyControlOp(control, files, op));
  try {
    db.transaction(() => {
      for (const table of plan.clearedRoutes) {
        statements.get('routes:clear', () => 'DELETE FROM routes WHERE table_name = ?').run(table);
      }
      const outcomes = plan.control.map((op): Outcome => {
        try {
          return single(op);
        } catch (error) {
          if (!isDataError(error)) throw error;
          rejections.push({ change: op.change, reason: `rejected by SQLite: ${(error as Error).message}` });
          return 'rejected';
        }
      });
      writeRoutes(control, plan);
      control.faults.recordFiles(batch.written ?? []);
      writeUnroutedTombstones(control, plan);
      insertDeadLetters(
        statements,
        batch.deadLetters,
        rejections,
        batch.nowMs,
        control.deadLetterLimits.maxRows,
      );
      const appliedHere = outcomes.filter((o) => o === 'applied').length + plan.appliedInControl.length;
      statements
        .get(
          'ingest-state:put',
          () =>
            `UPDATE ingest_state SET last_batch_at_ms = ?,
               last_source_ts_ms = CASE WHEN ? IS NULL THEN last_source_ts_ms
                                        ELSE max(coalesce(last_source_ts_ms, 0), ?) END,
               events_applied_total = events_applied_total + ?,
               source_current_at_ms = CASE WHEN ? IS NULL THEN source_current_at_ms
                                           ELSE max(coalesce(source_current_at_ms, 0), ?) END
             WHERE lock = 1`,
        )
        .run(
          batch.nowMs,
          batch.maxSourceTsMs ?? null,
          batch.maxSourceTsMs ?? null,
          batch.appliedElsewhere + appliedHere,
          batch.sourceCurrentAtMs ?? null,
          batch.sourceCurrentAtMs ?? null,
        );
      // Counted only once the transaction is certain to commit (nothing below can throw).
      plan.control.forEach((op, i) => {
        tally.count(op.change.table, outcomes[i] ?? 'rejected');
      });
      for (const change of plan.appliedInControl) tally.count(change.table, 'applied');
    })();
    control.faults.recorded(batch.written ?? []);
  } catch (error) {
    control.reload();
    throw error;
  }
}

/** The plan's unrouted tombstones (see planTenantDelete): final state per row. */
function writeUnroutedTombstones(control: ControlFile, plan: Plan): void {
  const { statements } = control;
  for (const [table, tombstones] of plan.unrouted) {
    for (const [id, lsn] of tombstones) {
      if (lsn === null) removeTombstone(statements, table, id);
      else {
        writeControlTombstone(statements, table, id, lsn);
        control.hasUnroutedTombstones = true;
      }
    }
  }
}

/**
 * The batch's routes, one statement per table (the rows as one JSON array) instead of one native
 * call per row: a batch of creates writes a route for nearly every change.
 */
export function writeRoutes(control: ControlFile, plan: Plan): void {
  const putRoutes = control.statements.get(
    'routes:put-many',
    () =>
      `INSERT INTO routes (table_name, id, company_id, _src_lsn)
       SELECT ?, value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true
       ON CONFLICT (table_name, id) DO UPDATE SET company_id = excluded.company_id, _src_lsn = excluded._src_lsn`,
  );
  for (const [table, routes] of plan.routes) {
    const rows: [string, string, number][] = [];
    for (const [id, route] of routes) rows.push([id, route.companyId, route.lsn]);
    if (rows.length > 0) putRoutes.run(table, JSON.stringify(rows));
  }
}

/**
 * The control-table operations (companies, api_keys, api_key_companies) with the same version
 * guard and tombstones as tenant rows. A company row that is applied gets its file created
 * (migrated, meta row), so the api never sees a company without one.
 */
function applyControlOp(control: ControlFile, files: CompanyFiles, op: ControlOp): Outcome {
  const { statements } = control;
  const floor = control.floors.get(op.table);
  if (op.kind !== 'truncate' && floor !== undefined && op.lsn <= floor) return 'skipped';
  switch (op.kind) {
    case 'upsert': {
      const tombstone = tombstoneLsn(statements, op.table, op.key);
      if (tombstone !== undefined && op.lsn <= tombstone) return 'skipped';
      const spec = tableSpec('control', op.table);
      if (upsertStatement(statements, spec, op.missing).run(...op.values, op.lsn).changes === 0)
        return 'skipped';
      if (tombstone !== undefined) removeTombstone(statements, op.table, op.key);
      if (op.table === 'companies' && control.ownsCompany(op.key)) files.get(op.key);
      return 'applied';
    }
    case 'delete': {
      const tombstone = tombstoneLsn(statements, op.table, op.key);
      if (tombstone !== undefined && op.lsn <= tombstone) return 'skipped';
      const spec = tableSpec('control', op.table);
      const where = spec.pk.map((c) => `${quoteIdent(c)} = ?`).join(' AND ');
      const stored = statements
        .get(`control:get:${op.table}`, () => `SELECT _src_lsn FROM ${quoteIdent(op.table)} WHERE ${where}`)
        .pluck()
        .get(...op.keyValues) as number | undefined;
      if (stored !== undefined && op.lsn <= stored) return 'skipped';
      statements
        .get(`control:delete:${op.table}`, () => `DELETE FROM ${quoteIdent(op.table)} WHERE ${where}`)
        .run(...op.keyValues);
      writeControlTombstone(statements, op.table, op.key, op.lsn);
      return 'applied';
    }
    case 'truncate': {
      if (floor !== undefined && op.lsn <= floor) return 'skipped';
      // Tenant tables: the floor, and their unrouted tombstones at or below it (the floor guards
      // those); their routes are cleared before routes are written.
      if (op.table === 'companies' || op.table === 'api_keys' || op.table === 'api_key_companies') {
        statements.get(`control:truncate:${op.table}`, () => `DELETE FROM ${quoteIdent(op.table)}`).run();
        statements
          .get('control:truncate:tombstones', () => 'DELETE FROM tombstones WHERE table_name = ?')
          .run(op.table);
      } else {
        statements
          .get(
            'control:truncate:unrouted',
            () => 'DELETE FROM tombstones WHERE table_name = ? AND _src_lsn <= ?',
          )
          .run(op.table, op.lsn);
      }
      statements
        .get(
          'control:floor',
          () =>
            `INSERT INTO truncations (table_name, _src_lsn) VALUES (?, ?)
             ON CONFLICT (table_name) DO UPDATE SET _src_lsn = excluded._src_lsn`,
        )
        .run(op.table, op.lsn);
      control.floors.set(op.table, op.lsn);
      return 'applied';
    }
  }
}
