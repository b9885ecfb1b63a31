// Every row of the campaign's companies in their projection compared with PostgreSQL, every column
// in the projection's representation (test/src/projection-vs-postgres.ts), counted as differences
// instead of failing at the first: missing (in PostgreSQL only), extra (in the projection only) and
// different rows. The comparison is repeated until it finds none or the time is up, so changes still
// on their way through Debezium and Kafka are not counted: after the writer stopped and ingest
// caught up, what remains is a real difference.

import { existsSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { companyPath, openCompanyReader, openControlReader, TENANT_TABLES } from '@pda/projections';
import type pg from 'pg';
import { pgRows, projectionRows, type Row } from '../../src/projection-vs-postgres.ts';
import { waitFor } from '../../src/stack-env.ts';

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

const keyOf = (row: Row) => String(row.id ?? `${row.api_key_id}/${row.company_id}`);

function diffRows(company: string, table: string, projected: Row[], expected: Row[]): Difference[] {
  const out: Difference[] = [];
  const byId = new Map(projected.map((r) => [keyOf(r), r]));
  for (const row of expected) {
    const id = keyOf(row);
    const mine = byId.get(id);
    if (!mine) out.push({ company, table, id, kind: 'missing' });
    else if (!isDeepStrictEqual(mine, row)) out.push({ company, table, id, kind: 'different' });
    byId.delete(id);
  }
  for (const id of byId.keys()) out.push({ company, table, id, kind: 'extra' });
  return out;
}

/** One pass over `companies`: their tenant tables and their control row. */
export async function compareWithPostgres(
  pool: pg.Pool,
  dataDir: string,
  companies: readonly string[],
): Promise<Comparison> {
  const differences: Difference[] = [];
  let rowsCompared = 0;
  for (const companyId of companies) {
    if (!existsSync(companyPath(dataDir, companyId))) {
      differences.push({ company: companyId, table: '(file)', id: companyId, kind: 'missing' });
      continue;
    }
    const db = openCompanyReader(dataDir, companyId);
    try {
      for (const table of TENANT_TABLES) {
        const projected = projectionRows(db, table);
        const expected = await pgRows(pool, table, 'company_id = $1', [companyId], projected.types);
        differences.push(...diffRows(companyId, table, projected.rows, expected));
        rowsCompared += expected.length;
      }
    } finally {
      db.close();
    }
    const control = openControlReader(dataDir);
    try {
      const projected = projectionRows(control, 'companies', 'id = ?', [companyId]);
      const expected = await pgRows(pool, 'companies', 'id = $1', [companyId], projected.types);
      differences.push(...diffRows(companyId, 'companies', projected.rows, expected));
      rowsCompared += expected.length;
    } finally {
      control.close();
    }
  }
  return { rowsCompared, differences };
}

/**
 * Compares until no difference is left or `timeoutMs` passed; returns the last comparison (its
 * differences are what the fault left behind).
 */
export async function settledComparison(
  pool: pg.Pool,
  dataDir: string,
  companies: readonly string[],
  { timeoutMs = 60_000 } = {},
): Promise<Comparison> {
  let last: Comparison = { rowsCompared: 0, differences: [] };
  try {
    await waitFor(
      'the projection equal to PostgreSQL',
      async () => {
        last = await compareWithPostgres(pool, dataDir, companies);
        return last.differences.length === 0;
      },
      { timeoutMs, intervalMs: 1_000 },
    );
  } catch {
    // timed out: `last` holds the differences that stayed
  }
  return last;
}
