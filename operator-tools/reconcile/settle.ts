// In-flight rows: a row that differs in the first pass may only be on its way (changed in
// PostgreSQL, not applied yet; or applied, and the source changed again after the snapshot). Such
// rows are read again until each one is equal (it was in flight), confirmed (it still differs
// although the projection is known current through the source state it is compared with, and that
// state did not change meanwhile), or the wait bound runs out (unsettled: "not caught up").
// The I/O is passed in, so the decision logic is tested without a stack (settle.test.ts).
import { compareRow, type Values } from './compare.ts';
import type { TablePlan } from './tables.ts';
import type { Difference, NotCaughtUp } from './types.ts';

/** A row that differed, and where to read it again. */
export interface Candidate<Scope = unknown> {
  readonly plan: TablePlan;
  /** The company of the difference (null: api_keys). */
  readonly companyId: string | null;
  readonly id: string;
  /** What the row is read in (a company, or the control tables); rows are read per scope and table. */
  readonly scope: Scope;
  difference: Difference;
}

/** One read of candidates: the row of each (by index), undefined where that side has none. */
export type Rows = readonly (Values | undefined)[];

export interface SettleIo<Scope> {
  /** The candidates' source rows, all in one new snapshot, and that snapshot's clock (ms). */
  readSource(candidates: readonly Candidate<Scope>[]): Promise<{ atMs: number; rows: Rows }>;
  readProjection(candidates: readonly Candidate<Scope>[]): Promise<Rows>;
  /** Source time (ms) through which the projection is known to have applied everything; null: unknown. */
  currentAtMs(): number | null;
  sleep(ms: number): Promise<void>;
  now(): number;
  onRound?(round: number, rows: number, waitingForMs?: number): void;
}

export interface SettleOptions {
  /** Total time the rechecks may take (ms). */
  readonly waitMs: number;
  /** Clock difference allowed between PostgreSQL and the heartbeat's clock (Kafka Connect). */
  readonly clockMarginMs: number;
}

export interface SettleResult {
  readonly confirmed: Difference[];
  readonly unsettled: Difference[];
  readonly notCaughtUp: NotCaughtUp | null;
}

/** Delays of the quick rechecks (no position needed): most in-flight rows land within a second. */
const QUICK_ROUNDS_MS = [200, 1_000];
/** How often the projection's current source time is read while waiting for it. */
const POLL_MS = 250;

const fingerprint = (row: Values | undefined) => (row === undefined ? '-' : JSON.stringify(row));

export async function settle<Scope>(
  candidates: readonly Candidate<Scope>[],
  io: SettleIo<Scope>,
  options: SettleOptions,
): Promise<SettleResult> {
  const deadline = io.now() + options.waitMs;
  let remaining = [...candidates];
  let round = 0;

  /** Keeps the candidates that still differ (with their current difference). */
  const stillDiffering = (source: Rows, projection: Rows) =>
    remaining.filter((candidate, i) => {
      const difference = compareRow(candidate.plan, candidate.companyId, source[i], projection[i]);
      if (difference) candidate.difference = difference;
      return difference !== undefined;
    });

  // Quick rounds: a row equal on both sides now was only in flight.
  for (const delay of QUICK_ROUNDS_MS) {
    if (remaining.length === 0 || io.now() + delay > deadline) break;
    await io.sleep(delay);
    io.onRound?.(++round, remaining.length);
    const projection = await io.readProjection(remaining);
    const { rows: source } = await io.readSource(remaining);
    remaining = stillDiffering(source, projection);
  }

  // Confirming rounds: S_k is read; once the projection is known current through S_k's time, the
  // projection is read, then the source again (S_k+1). Equal to S_k+1: it was in flight. Differing
  // while S_k = S_k+1: no change happened to the row between S_k and after the projection read, and
  // the projection had applied everything before S_k — so the projection is wrong: confirmed.
  const confirmed: Difference[] = [];
  if (remaining.length === 0) return { confirmed, unsettled: [], notCaughtUp: null };
  let before = await io.readSource(remaining);
  for (;;) {
    const needed = before.atMs + options.clockMarginMs;
    io.onRound?.(++round, remaining.length, needed);
    for (let current = io.currentAtMs(); current === null || current < needed; current = io.currentAtMs()) {
      if (io.now() + POLL_MS > deadline) {
        return {
          confirmed,
          unsettled: remaining.map((candidate) => candidate.difference),
          notCaughtUp: {
            reason: `the projection did not catch up with the source within the wait bound (${Math.round(options.waitMs / 1000)} s): ${remaining.length} row(s) still differ and may be in flight`,
            needed: new Date(needed).toISOString(),
            projectionCurrentAt: current === null ? null : new Date(current).toISOString(),
          },
        };
      }
      await io.sleep(POLL_MS);
    }
    const projection = await io.readProjection(remaining);
    const after = await io.readSource(remaining);
    const next: Candidate<Scope>[] = [];
    const previous = new Map(remaining.map((candidate, i) => [candidate, before.rows[i]]));
    const differing = stillDiffering(after.rows, projection);
    const afterRows = new Map(remaining.map((candidate, i) => [candidate, after.rows[i]]));
    for (const candidate of differing) {
      if (fingerprint(previous.get(candidate)) === fingerprint(afterRows.get(candidate))) {
        confirmed.push(candidate.difference);
      } else {
        next.push(candidate);
      }
    }
    if (next.length === 0) return { confirmed, unsettled: [], notCaughtUp: null };
    before = { atMs: after.atMs, rows: next.map((candidate) => afterRows.get(candidate)) };
    remaining = next;
  }
}
