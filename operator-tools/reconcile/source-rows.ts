// A table's rows in PostgreSQL in the projection's representation, as objects, for callers that
// want the source side without a comparison (tests' oracles render the api's documents from them).
// The same select lists and snapshot reader as reconcile: one definition of the mappings.

import type { TableName } from '@pda/schemas/registry';
import type pg from 'pg';
import { connectSource, type SourceFilter, SourceReader } from './source.ts';
import { tablePlan } from './tables.ts';

/** Every row of `table` matching `filter` ($1… parameters), in primary-key order, column → value. */
export async function sourceRows(
  source: pg.Pool | pg.ClientConfig,
  table: TableName,
  filter: SourceFilter,
): Promise<Record<string, unknown>[]> {
  const plan = tablePlan(table);
  const { client, release } = await connectSource(source);
  try {
    const reader = await SourceReader.load(client, [plan]);
    await reader.begin();
    try {
      const rows: Record<string, unknown>[] = [];
      for await (const batch of reader.rows(plan, filter, 5_000)) {
        for (const values of batch) rows.push(Object.fromEntries(plan.columns.map((c, i) => [c, values[i]])));
      }
      return rows;
    } finally {
      await reader.end();
    }
  } finally {
    await release();
  }
}
