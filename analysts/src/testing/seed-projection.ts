import { DEFAULT_COUNTS, generateCompanyData, type SeedCounts } from '@pda/dev-world/seed';
import type { Change, Row } from '@pda/projections/model';
import { makeUpsert } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';

/**
 * A projection data directory built from the dev world's seed generator through ProjectionStore (the path
 * ingest takes), without PostgreSQL or Kafka: the same rows `pnpm --filter @pda/dev-world seed` loads
 * (seed 42, three companies by default), with fixed ids (run '') and fixed created_at/updated_at
 * (the database sets those in production), so analyses of it print the same output every time.
 * docs/analysts.md's examples run on it (analysts/tests/analysts-doc.test.ts checks them).
 */

export const DEMO_SEED = 42;
const BASE_MS = Date.UTC(2026, 0, 5, 8, 0, 0);
const CHUNK = 5_000;

export interface SeedProjectionOptions {
  readonly seed?: number | string;
  readonly counts?: Partial<SeedCounts>;
}

export function seedProjection(dataDir: string, options: SeedProjectionOptions = {}): { rows: number } {
  const counts = { ...DEFAULT_COUNTS, ...options.counts };
  const store = ProjectionStore.open({ dataDir });
  let batch: Change[] = [];
  let lsn = 0;
  try {
    for (const { table, row } of generateCompanyData(options.seed ?? DEMO_SEED, counts)) {
      // One second apart, so created_at sorts like the load.
      const at = new Date(BASE_MS + lsn * 1_000).toISOString().replace('Z', '000Z');
      batch.push(makeUpsert(table, { ...row, created_at: at, updated_at: at } as Row, ++lsn));
      if (batch.length === CHUNK) {
        store.applyBatch(batch);
        batch = [];
      }
    }
    if (batch.length > 0) store.applyBatch(batch);
  } finally {
    store.close();
  }
  return { rows: lsn };
}
