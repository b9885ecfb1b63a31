// Loads a generated data set into the operational PostgreSQL.
import type { ClientBase } from 'pg';
import type { Logger } from 'pino';
import { companyProfile } from './company-profile.ts';
import { writeSeedRows } from './copy-writer.ts';
import { type SeedCounts, totalRows, validateCounts } from './counts.ts';
import { generateCompanyData } from './generate.ts';
import type { SeedTable } from './rows.ts';

export interface SeedOptions {
  seed: number | string;
  counts: SeedCounts;
  batchSize?: number;
  /** empty all nine captured tables first (API keys and grants included) */
  truncate?: boolean;
  logger?: Logger;
}

export interface SeedResult {
  rows: number;
  byTable: Partial<Record<SeedTable, number>>;
  seconds: number;
  rowsPerSecond: number;
  companyIds: string[];
}

/** The seed was already loaded: inserting again would only hit primary-key conflicts. */
export class SeedConflictError extends Error {}

const ALL_CAPTURED =
  'companies, api_keys, api_key_companies, sites, site_contacts, services, equipment_categories, equipment, consumables';

export async function seedDatabase(client: ClientBase, options: SeedOptions): Promise<SeedResult> {
  const counts = validateCounts({ ...options.counts });
  const batchSize = options.batchSize ?? 10_000;
  const log = options.logger;
  const companyIds = Array.from({ length: counts.companies }, (_, i) => companyProfile(options.seed, i).id);

  if (options.truncate) {
    await client.query(`TRUNCATE ${ALL_CAPTURED} CASCADE`);
    log?.info('truncated the captured tables');
  } else if (companyIds.length > 0) {
    const { rows } = await client.query<{ id: string }>(
      'SELECT id FROM companies WHERE id = ANY($1::uuid[]) LIMIT 1',
      [companyIds],
    );
    if (rows[0]) {
      throw new SeedConflictError(
        `company ${rows[0].id} of seed ${JSON.stringify(String(options.seed))} already exists; pass --truncate to empty the tables first, or use another --seed`,
      );
    }
  }

  const expected = totalRows(counts);
  const byTable: Partial<Record<SeedTable, number>> = {};
  const started = performance.now();
  let done = 0;
  let lastLog = started;
  const rows = await writeSeedRows(client, generateCompanyData(options.seed, counts), {
    batchSize,
    onBatch(table, n) {
      byTable[table] = (byTable[table] ?? 0) + n;
      done += n;
      const now = performance.now();
      // A progress line every few seconds, not one per batch, so millions of rows stay readable.
      if (now - lastLog >= 3000) {
        lastLog = now;
        const rate = Math.round(done / ((now - started) / 1000));
        log?.info({ rows: done, of: expected, rowsPerSecond: rate }, 'seeding');
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    rows,
    byTable,
    seconds,
    rowsPerSecond: seconds > 0 ? Math.round(rows / seconds) : rows,
    companyIds,
  };
}
