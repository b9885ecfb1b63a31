// Loads a generated data set into the operational PostgreSQL, in one transaction.
import { randomUUID } from 'node:crypto';
import { withTransaction } from '@pda/operator-tools/pg';
import type { ClientBase } from 'pg';
import type { Logger } from 'pino';
import { companyProfile } from './company-profile.ts';
import { writeSeedRows } from './copy-writer.ts';
import { type SeedCounts, totalRows, validateCounts } from './counts.ts';
import { generateCompanyData } from './generate.ts';
import type { SeedTable } from './rows.ts';

export interface SeedOptions {
  seed: number | string;
  /**
   * The id namespace of this load (ids.ts). Default: a fresh random one, so loading a seed into a
   * database that already holds it adds companies instead of colliding. Pass the `run` of an
   * earlier result to get exactly its ids again.
   */
  run?: string;
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
  run: string;
}

/** The rows' ids are taken: this seed was loaded before under the same run. Nothing was written. */
export class SeedConflictError extends Error {}

const ALL_CAPTURED =
  'companies, api_keys, api_key_companies, sites, site_contacts, services, equipment_categories, equipment, consumables';

function isUniqueViolation(error: unknown): error is Error & { detail?: string } {
  return error instanceof Error && (error as { code?: unknown }).code === '23505';
}

export async function seedDatabase(client: ClientBase, options: SeedOptions): Promise<SeedResult> {
  const counts = validateCounts({ ...options.counts });
  const batchSize = options.batchSize ?? 10_000;
  const log = options.logger;
  const run = options.run ?? randomUUID();
  const companyIds = Array.from(
    { length: counts.companies },
    (_, i) => companyProfile(options.seed, i, run).id,
  );

  const expected = totalRows(counts);
  const byTable: Partial<Record<SeedTable, number>> = {};
  const started = performance.now();
  let done = 0;
  let lastLog = started;
  const load = async () => {
    if (options.truncate) {
      await client.query(`TRUNCATE ${ALL_CAPTURED} CASCADE`);
      log?.info('truncated the captured tables');
    }
    return writeSeedRows(client, generateCompanyData(options.seed, counts, run), {
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
  };
  let rows: number;
  try {
    // One transaction, truncation included: a failure anywhere (an id conflict, a lost connection,
    // a row the schema refuses) leaves the database as it was.
    rows = await withTransaction(client, load);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw new SeedConflictError(
      `seed ${JSON.stringify(String(options.seed))} run ${JSON.stringify(run)} is already loaded (${error.detail ?? error.message}); nothing was written — leave out the run or pass another`,
      { cause: error },
    );
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    rows,
    byTable,
    seconds,
    rowsPerSecond: seconds > 0 ? Math.round(rows / seconds) : rows,
    companyIds,
    run,
  };
}
