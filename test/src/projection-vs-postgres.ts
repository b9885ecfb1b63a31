// The projection compared with PostgreSQL, row by row and column by column, stored documents
// included: the assertion form of reconcile of @pda/operator-tools/reconcile (the one implementation of the comparison
// and its mappings). expectProjectionEqualsPostgres does not wait for rows in flight;
// expectProjectionSettlesOnPostgres retries it until it passes.
import { reconcile } from '@pda/operator-tools/reconcile';
import type pg from 'pg';
import { expect } from 'vitest';
import { waitFor } from './stack-env.ts';

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

/** Waits until every row and column of the company's projection equals PostgreSQL, then asserts it. */
export async function expectProjectionSettlesOnPostgres(
  pool: pg.Pool,
  dataDir: string,
  companyId: string,
  options: { what?: string; timeoutMs: number; intervalMs: number },
): Promise<number> {
  const { what = `projection of ${companyId} to equal PostgreSQL`, ...timing } = options;
  await waitFor(
    what,
    async () => {
      try {
        await expectProjectionEqualsPostgres(pool, dataDir, companyId);
        return true;
      } catch {
        return false;
      }
    },
    timing,
  );
  return expectProjectionEqualsPostgres(pool, dataDir, companyId);
}
