// Seeds the real PostgreSQL and compares what landed with what the generator yields; loads a seed
// again, and fails a load midway, to show ids never collide and a failed load writes nothing.
// The database is shared with the other e2e tests (and captured by Debezium): every run uses its own
// seed and deletes its companies afterwards instead of truncating.

import { pgConfigFromEnv } from '@pda/operator-tools/pg';
import { runOpsCli } from '@pda/operator-tools/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deleteCompanies,
  generateCompanyData,
  SEED_COLUMNS,
  SEED_TABLES,
  SeedConflictError,
  type SeedCounts,
  type SeedResult,
  seedDatabase,
  totalRows,
} from '../../seed/index.ts';

const counts: SeedCounts = {
  companies: 2,
  sites: 30,
  contactsPerSite: 2,
  services: 5,
  categories: 3,
  equipment: 7,
  consumables: 4,
};
const seed = `e2e-seed-${process.pid}-${Date.now()}`;
const client = new pg.Client(pgConfigFromEnv());
const cleanup: string[] = [];
let result: SeedResult;

// Column expressions that print PostgreSQL values the way the generator writes them.
/** Rows per table whose id is one of `ids` (the rows a load would write). */
async function countIds(ids: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of SEED_TABLES) {
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    out[table] = rows[0].n;
  }
  return out;
}

/** Rows per table owned by `companyIds` (the companies themselves included). */
async function countOwned(companyIds: readonly string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of SEED_TABLES) {
    const column = table === 'companies' ? 'id' : 'company_id';
    const { rows } = await client.query(
      `SELECT count(*)::int AS n FROM ${table} WHERE ${column} = ANY($1::uuid[])`,
      [companyIds],
    );
    out[table] = rows[0].n;
  }
  return out;
}

function selectList(columns: readonly string[]): string {
  return columns
    .map((c) =>
      c === 'geocoded_at'
        ? `to_char(${c} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ${c}`
        : /amount|^area$|^latitude$|^longitude$/.test(c)
          ? `${c}::text AS ${c}`
          : c,
    )
    .join(', ');
}

beforeAll(async () => {
  await client.connect();
  // A small batch size forces several COPY batches per table.
  result = await seedDatabase(client, { seed, counts, batchSize: 7 });
  cleanup.push(...result.companyIds);
});

afterAll(async () => {
  await deleteCompanies(client, cleanup).catch(() => undefined);
  await client.end();
});

describe('seedDatabase against PostgreSQL', () => {
  it('reports every row it wrote', () => {
    expect(result.rows).toBe(totalRows(counts));
    expect(result.byTable.sites).toBe(counts.companies * counts.sites);
    expect(result.byTable.site_contacts).toBe(counts.companies * counts.sites * counts.contactsPerSite);
    expect(result.rowsPerSecond).toBeGreaterThan(0);
  });

  it('stores exactly the generated rows, decimals and timestamps included', async () => {
    const generated = [...generateCompanyData(seed, counts, result.run)];
    for (const table of SEED_TABLES) {
      const columns = SEED_COLUMNS[table] as readonly string[];
      const idColumn = table === 'companies' ? 'id' : 'company_id';
      const { rows } = await client.query(
        `SELECT ${selectList(columns)} FROM ${table} WHERE ${idColumn} = ANY($1::uuid[]) ORDER BY id`,
        [result.companyIds],
      );
      const expected = generated
        .filter((r) => r.table === table)
        .map((r) => r.row)
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(rows, table).toEqual(expected);
    }
  });

  it('leaves created_at and updated_at to the database', async () => {
    const { rows } = await client.query(
      'SELECT count(*)::int AS n FROM sites WHERE company_id = ANY($1::uuid[]) AND created_at IS NOT NULL AND updated_at = created_at',
      [result.companyIds],
    );
    expect(rows[0].n).toBe(counts.companies * counts.sites);
  });

  it('loads the same seed again, and an overlapping one, under new ids: the counts add up', async () => {
    const again = await seedDatabase(client, { seed, counts, batchSize: 50 });
    cleanup.push(...again.companyIds);
    const more = await seedDatabase(client, { seed, counts: { ...counts, companies: 3 } });
    cleanup.push(...more.companyIds);
    const all = [...result.companyIds, ...again.companyIds, ...more.companyIds];
    expect(new Set(all).size).toBe(7);
    const owned = await countOwned(all);
    expect(owned.companies).toBe(7);
    expect(owned.sites).toBe(7 * counts.sites);
    expect(owned.site_contacts).toBe(7 * counts.sites * counts.contactsPerSite);
    expect(Object.values(owned).reduce((a, b) => a + b, 0)).toBe(totalRows({ ...counts, companies: 7 }));
  });

  it('refuses a run that is already loaded and leaves the data alone', async () => {
    const before = await countOwned(result.companyIds);
    await expect(seedDatabase(client, { seed, run: result.run, counts })).rejects.toThrow(SeedConflictError);
    expect(await countOwned(result.companyIds)).toEqual(before);
  });

  it('writes nothing when the load fails midway (the second company collides)', async () => {
    const run = `failing-${seed}`;
    const rows = [...generateCompanyData(seed, counts, run)];
    const [first, second] = rows.filter((r) => r.table === 'companies').map((r) => r.row);
    if (!first || !second) throw new Error('expected two companies');
    // Taken ahead: company 0 and everything it owns (several batches of 7) is written before the
    // COPY of company 1 hits companies_pkey.
    await client.query('INSERT INTO companies (id, name, currency) VALUES ($1, $2, $3)', [
      second.id,
      'taken',
      'USD',
    ]);
    cleanup.push(first.id, second.id);
    const ids = rows.map((r) => r.row.id);
    const before = await countIds(ids);
    const error = await seedDatabase(client, { seed, run, counts, batchSize: 7 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SeedConflictError);
    expect(String(error)).toContain(second.id);
    expect(await countIds(ids)).toEqual(before);
    expect(await countOwned([first.id])).toEqual(Object.fromEntries(SEED_TABLES.map((t) => [t, 0])));
  });
});

describe('seed CLI', () => {
  it('seeds and prints rows and rows/s', async () => {
    const cliSeed = `${seed}-cli`;
    const cliRun = `${seed}-cli-run`;
    const ids = [...generateCompanyData(cliSeed, { ...counts, companies: 1 }, cliRun)]
      .filter((r) => r.table === 'companies')
      .map((r) => r.row.id);
    cleanup.push(...ids);
    const out = await runOpsCli('seed', [
      '--companies',
      '1',
      '--sites',
      '3',
      '--contacts-per-site',
      '1',
      '--seed',
      cliSeed,
      '--run',
      cliRun,
    ]);
    expect(out.stderr).not.toMatch(/error/i);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^seeded \d+ rows for 1 companies in [\d.]+ s \(\d+ rows\/s\)/m);
    expect(out.stdout).toContain(`run ${JSON.stringify(cliRun)}`);
    const { rows } = await client.query(
      'SELECT count(*)::int AS n FROM sites WHERE company_id = ANY($1::uuid[])',
      [ids],
    );
    expect(rows[0].n).toBe(3);
  });

  it('answers bad arguments with one error line, the usage and exit 2', async () => {
    for (const args of [
      ['--sites', 'many'],
      ['--frobnicate'],
      ['--equipment', '3', '--categories', '0'],
      ['extra'],
      ['--run', ''],
    ]) {
      const out = await runOpsCli('seed', args);
      expect(out.code, args.join(' ')).toBe(2);
      const [first, second] = out.stderr.split('\n');
      expect(first).toMatch(/^error: /);
      expect(second).toBe('');
      expect(out.stderr).toContain('usage: pnpm --filter @pda/dev-world seed');
    }
  });
});
