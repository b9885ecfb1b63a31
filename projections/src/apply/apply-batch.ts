import type { Change } from '../change.ts';
import { applyCompanyOps } from './apply-company.ts';
import { applyControl } from './apply-control.ts';
import type { CompanyFiles } from './company-files.ts';
import type { ControlFile } from './control-file.ts';
import type { DeadLetter } from './dead-letters.ts';
import type { Rejection } from './plan.ts';
import { planBatch } from './plan-batch.ts';
import { type BatchResult, Tally } from './result.ts';

/**
 * Applies one batch: plan, then one transaction per company file, then the control transaction.
 *
 * Why this order is crash-safe (exactly once in effect, docs/architecture.md#guarantees): the plan
 * is computed from control.sqlite alone (routes, TRUNCATE floors), and control.sqlite is committed
 * LAST. If the process dies after some company files committed but before the control commit, the batch is
 * redelivered (Kafka offsets are committed only after applyBatch returns), the plan is rebuilt from
 * the same control state, so it is the same plan; the files that already committed skip every
 * operation through their version guards (_src_lsn, tombstones, floors) and the others apply
 * theirs. Once control committed, a redelivery finds every change at or below a guard: all skipped.
 * Creating a company's file is idempotent, so it may happen before its control row commits.
 * Company transactions never depend on each other, only on the plan, so their order is free.
 */
export function applyBatch(
  control: ControlFile,
  files: CompanyFiles,
  dataDir: string,
  changes: readonly Change[],
  deadLetters: readonly DeadLetter[],
  nowMs: number,
  sourceCurrentAtMs?: number,
): BatchResult {
  const started = performance.now();
  const plan = planBatch(changes, control, dataDir);
  const planned = performance.now();
  const tally = new Tally();
  const rejections: Rejection[] = [...plan.rejections];

  const before = files.counts();
  // Open files first, then the others: when the batch spans more companies than the cache holds,
  // only those beyond the bound are reopened, not every one (company transactions are independent).
  const closed: string[] = [];
  for (const [companyId, ops] of plan.companies) {
    if (files.isOpen(companyId)) applyCompanyOps(files.get(companyId), ops, tally, rejections);
    else closed.push(companyId);
  }
  for (const companyId of closed) {
    applyCompanyOps(files.get(companyId), plan.companies.get(companyId) ?? [], tally, rejections);
  }
  const appliedElsewhere = tally.applied;
  const companiesDone = performance.now();

  let maxSourceTsMs: number | undefined;
  for (const change of changes) {
    const ts = change.position?.tsMs;
    if (Number.isFinite(ts) && (maxSourceTsMs === undefined || ts > maxSourceTsMs)) maxSourceTsMs = ts;
  }
  applyControl(
    control,
    files,
    { plan, rejections, deadLetters, appliedElsewhere, maxSourceTsMs, sourceCurrentAtMs, nowMs },
    tally,
  );
  const controlDone = performance.now();
  files.closeIdle();
  const after = files.counts();

  for (const change of plan.skipped) tally.count(change.table, 'skipped');
  for (const { change } of plan.rejections) tally.count(change.table, 'rejected');
  return {
    tables: tally.tables,
    applied: tally.applied,
    skipped: tally.skipped,
    rejected: tally.rejected,
    companies: plan.companies.size,
    files: {
      opened: after.opened - before.opened,
      evicted: after.evicted - before.evicted,
      closedIdle: after.closedIdle - before.closedIdle,
      open: after.open,
      max: after.max,
    },
    rejections,
    deadLettered: deadLetters.length + rejections.length,
    timings: {
      planMs: planned - started,
      companiesMs: companiesDone - planned,
      controlMs: controlDone - companiesDone,
    },
  };
}
