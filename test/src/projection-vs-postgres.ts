// The projection compared with PostgreSQL, row by row and column by column, stored documents
// included: the assertion form of reconcile of @pda/ops/reconcile (the one implementation of the comparison
// and its mappings). No waiting for rows in flight: callers that need the projection to settle
// retry (waitFor) until it passes.
import { reconcile } from '@pda/ops/reconcile';
import type pg from 'pg';
import { expect } from 'vitest';

export type Row = Record<string, unknown>;

/** Asserts that one company's tenant rows and control rows equal PostgreSQL's; returns its tenant rows. */
export async function expectProjectionEqualsPostgres(
  pool: pg.Pool,
  dataDir: string,
  companyId: string,
): Promise<number> {
  const report = await reconcile({ pg: pool, dataDir, companies: [companyId], waitMs: 0 });
  expect([...report.differences, ...report.unsettled], `projection of ${companyId} vs PostgreSQL`).toEqual(
    [],
  );
  return report.companies[0]?.sourceRows ?? 0;
}
