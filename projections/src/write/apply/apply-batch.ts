import type { Change } from '../../model/change.ts';
import { CompanyFileDamagedError } from '../../model/errors.ts';
import { classifyFault } from '../../model/storage-faults.ts';
import type { TraceLink } from '../../model/trace-link.ts';
import type { CompanyFault } from '../../read/company-faults.ts';
import type { CompanyFiles } from '../files/company-files.ts';
import type { ControlFile } from '../files/control-file.ts';
import { companyOrder } from '../plan/company-order.ts';
import type { CompanyOp, Rejection } from '../plan/plan.ts';
import { planBatch } from '../plan/plan-batch.ts';
import type { DeadLetter } from '../upkeep/dead-letters.ts';
import { applyCompany } from './apply-company.ts';
import { applyControl, writeRoutes } from './apply-control.ts';
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
 *
 * Company transactions depend only on the plan, with one exception: a moved row whose change left
 * columns out (unchanged TOASTed values) takes them from the file it left, which must therefore
 * commit after the receiving file (company-order.ts, apply-company.ts readCarried). Should two such
 * moves need opposite orders (rows swapping companies), the batch is cut before the second: the
 * first part is applied and committed, control included, then the rest is planned and applied the
 * same way. Each part is a batch of its own, so a redelivery of the whole is safe as above.
 *
 * A damaged company file (company-faults.ts) fails only its company: the company is taken out of
 * service, its operations are skipped (now and in later batches, until its rebuild), a row that
 * would move out of it waits (plan-tenant.ts) and the batch goes on. `onlyCompany` is that
 * rebuild's backfill: the changes of the rows that ever belonged to the company, replayed in their
 * order. The plan is made as usual and applied to every file — in the other companies' files the
 * version guards skip what they already hold, and what the live batches skipped (a row's move out
 * of the company and its later changes, which waited) is applied there now — with the routes it
 * moves; nothing else of control.sqlite is written (the live batches are past every other change).
 */
export function applyBatch(
  control: ControlFile,
  files: CompanyFiles,
  dataDir: string,
  changes: readonly Change[],
  deadLetters: readonly DeadLetter[],
  nowMs: number,
  sourceCurrentAtMs?: number,
  onlyCompany?: string,
  detected: CompanyFault[] = [],
  trace?: TraceLink,
): Omit<BatchResult, 'statements'> {
  const tally = new Tally();
  const rejections: Rejection[] = [];
  const timings = { planMs: 0, companiesMs: 0, controlMs: 0 };
  const before = files.counts();
  let companies = 0;
  let rest = changes;
  let first = true;
  do {
    const started = performance.now();
    const plan = planBatch(
      rest,
      control,
      dataDir,
      onlyCompany === undefined ? (id) => control.faults.isOutOfService(id) : undefined,
    );
    const part = plan.planned === rest.length ? rest : rest.slice(0, plan.planned);
    rest = part === rest ? [] : rest.slice(plan.planned);
    const planned = performance.now();
    const partRejections: Rejection[] = [...plan.rejections];
    const appliedBefore = tally.applied;

    const written: string[] = [];
    for (const companyId of companyOrder(plan, (id) => files.isOpen(id))) {
      const ops = plan.companies.get(companyId) ?? [];
      if (control.faults.isDamaged(companyId)) {
        skipAll(ops, tally);
        continue;
      }
      try {
        applyCompany(files, companyId, ops, tally, partRejections, trace);
        written.push(companyId);
      } catch (error) {
        if (classifyFault(error) !== 'damaged') throw error;
        detected.push(takeOutOfService(control, files, companyId, error, nowMs));
        skipAll(ops, tally);
      }
    }
    const companiesDone = performance.now();
    if (onlyCompany !== undefined) {
      // Only the rows whose changes waited for the company move their routes here: every other
      // route is already past the replayed change (the plan changes a route only for a newer one).
      control.db.transaction(() => writeRoutes(control, plan))();
      for (const change of plan.skipped) tally.count(change.table, 'skipped');
      companies += written.length;
      first = false;
      timings.planMs += planned - started;
      timings.companiesMs += companiesDone - planned;
      continue;
    }

    let maxSourceTsMs: number | undefined;
    for (const change of part) {
      const ts = change.position?.tsMs;
      if (Number.isFinite(ts) && (maxSourceTsMs === undefined || ts > maxSourceTsMs)) maxSourceTsMs = ts;
    }
    applyControl(
      control,
      files,
      {
        plan,
        rejections: partRejections,
        deadLetters: first ? deadLetters : [],
        appliedElsewhere: tally.applied - appliedBefore,
        maxSourceTsMs,
        // Only once every change of the batch is applied.
        sourceCurrentAtMs: rest.length === 0 ? sourceCurrentAtMs : undefined,
        nowMs,
        written,
      },
      tally,
    );
    for (const change of plan.skipped) tally.count(change.table, 'skipped');
    for (const { change } of plan.rejections) tally.count(change.table, 'rejected');
    rejections.push(...partRejections);
    companies += plan.companies.size;
    first = false;
    timings.planMs += planned - started;
    timings.companiesMs += companiesDone - planned;
    timings.controlMs += performance.now() - companiesDone;
  } while (rest.length > 0);
  files.closeIdle();
  const after = files.counts();

  return {
    tables: tally.tables,
    applied: tally.applied,
    skipped: tally.skipped,
    rejected: tally.rejected,
    companies,
    files: {
      opened: after.opened - before.opened,
      evicted: after.evicted - before.evicted,
      closedIdle: after.closedIdle - before.closedIdle,
      open: after.open,
      max: after.max,
    },
    rejections,
    deadLettered: deadLetters.length + rejections.length,
    timings,
    faults: { detected, outOfService: control.faults.list() },
  };
}

/** Operations not applied (company out of service, or not the one being rebuilt): counted skipped. */
function skipAll(ops: readonly CompanyOp[], tally: Tally): void {
  for (const op of ops) if (!op.derived) tally.count(op.change.table, 'skipped');
}

/**
 * The company's file is damaged: close it, move it aside and record the fault (its own control
 * transaction, committed now: the company stays out of service across restarts).
 */
export function takeOutOfService(
  control: ControlFile,
  files: CompanyFiles,
  companyId: string,
  error: unknown,
  nowMs: number,
): CompanyFault {
  const damaged = error instanceof CompanyFileDamagedError ? error : undefined;
  const id = damaged?.companyId ?? companyId;
  const reason =
    damaged?.reason ??
    `corrupt: ${(error as { code?: string }).code ?? 'error'} ${(error as Error).message ?? String(error)}`;
  files.drop(id);
  return control.faults.markDamaged(id, reason, nowMs);
}
