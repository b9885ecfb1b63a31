// Every row of the campaign's companies in their projection compared with PostgreSQL by
// @pda/operator-tools/reconcile (every column in the projection's representation, the stored documents, the control
// rows), counted as differences instead of failing at the first: missing (in PostgreSQL only),
// extra (in the projection only) and different rows. Changes still on their way through Debezium
// and Kafka are not counted: reconcile reads differing rows again until they settle or the
// projection is known current past them; what it confirms is a real difference, and rows it could
// not settle in time (ingest not caught up) are counted too.

import { reconcile } from '@pda/operator-tools/reconcile';
import type pg from 'pg';

export interface Difference {
  readonly company: string;
  readonly table: string;
  readonly id: string;
  readonly kind: 'missing' | 'extra' | 'different';
}

export interface Comparison {
  readonly rowsCompared: number;
  readonly differences: Difference[];
}

/** Compares `companies`, waiting up to `waitMs` for rows in flight to settle. */
export async function compareWithPostgres(
  pool: pg.Pool,
  dataDir: string,
  companies: readonly string[],
  waitMs = 0,
): Promise<Comparison> {
  const report = await reconcile({ pg: pool, dataDir, companies, waitMs });
  return {
    rowsCompared: report.totals.sourceRows,
    differences: [...report.differences, ...report.unsettled].map((d) => ({
      company: d.companyId ?? '',
      table: d.table,
      id: d.id,
      kind: d.kind,
    })),
  };
}

/**
 * Compares once the rows in flight had up to `timeoutMs` to land; the differences returned are
 * what the fault left behind.
 */
export function settledComparison(
  pool: pg.Pool,
  dataDir: string,
  companies: readonly string[],
  { timeoutMs = 60_000 } = {},
): Promise<Comparison> {
  return compareWithPostgres(pool, dataDir, companies, timeoutMs);
}
