// The campaign's continuous writer: companies seeded in PostgreSQL, then random changes
// (test/src/random-writer.ts: every exported table and kind of column, moves between the two
// companies, late commits) until stopped. It goes on through the faults: a change that fails because
// PostgreSQL is restarting is abandoned, and the comparison at the end takes PostgreSQL's final state
// as the reference. Since the writer swallows what fails, every case asserts what it committed
// (committedChanges) and how many of its slices failed.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { seedCompany, type WriterSummary, writeRandomly } from '../../src/random-writer.ts';
import { pgPool } from '../../src/stack-env.ts';

/** A pool that survives a PostgreSQL restart: a dropped connection is not an uncaught error. */
export function faultTolerantPool(max = 6): pg.Pool {
  const pool = pgPool(undefined, max);
  pool.on('error', () => {});
  // A checked-out client (a late transaction waiting to commit) reports a terminated connection
  // on itself, not on the pool: without a listener that is an uncaught exception. The statement
  // it was running fails anyway, and the writer abandons that change.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

/** `count` new companies with `sites` sites each (and the other tables' rows), as the office would. */
export async function createCompanies(pool: pg.Pool, label: string, count: number, sites: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, $2, 'USD')", [
      id,
      `Fault campaign ${label} ${i + 1}`,
    ]);
    await seedCompany(pool, id, sites);
    ids.push(id);
  }
  return ids;
}

export interface ContinuousWriterSummary extends WriterSummary {
  /** Slices that threw: an error writeRandomly did not turn into an abandoned change. */
  readonly failedSlices: number;
  /** The first such error's message, to say why in an assertion's message. */
  readonly firstSliceError: string | null;
}

export interface ContinuousWriter {
  /** Stops after the current slice; resolves with what was committed and abandoned overall. */
  stop(): Promise<ContinuousWriterSummary>;
}

/** Random changes to `company` (sites move to and from `other`) until stop(). */
export function startContinuousWriter(
  pool: pg.Pool,
  scope: { company: string; other: string },
  { pauseMs = 25 } = {},
): ContinuousWriter {
  let stopping = false;
  let failedSlices = 0;
  let firstSliceError: string | null = null;
  let lateTransactions = 0;
  let abandoned = 0;
  const committed: Record<string, number> = {};
  const loop = (async () => {
    while (!stopping) {
      try {
        // Short slices, so stop() returns soon; a slice that throws (PostgreSQL gone while a late
        // transaction took its connection) counts and the next one starts.
        const slice = await writeRandomly(pool, scope, { ms: 2_000, pauseMs });
        lateTransactions += slice.lateTransactions;
        abandoned += slice.abandoned;
        for (const [name, n] of Object.entries(slice.committed)) committed[name] = (committed[name] ?? 0) + n;
      } catch (error) {
        failedSlices += 1;
        firstSliceError ??= String(error);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      return { committed, lateTransactions, abandoned, failedSlices, firstSliceError };
    },
  };
}

/** Changes committed by a writer summary, all operations together. */
export const committedChanges = (summary: WriterSummary) =>
  Object.values(summary.committed).reduce((sum, n) => sum + n, 0);

/** What a case records of its writer: the changes it committed, what it abandoned, the slices that failed. */
export const writerRecord = (summary: ContinuousWriterSummary) => ({
  changes: committedChanges(summary),
  abandoned: summary.abandoned,
  failedSlices: summary.failedSlices,
  firstSliceError: summary.firstSliceError,
});
