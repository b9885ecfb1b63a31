// The analysts' CLI (docs/analysts.md) on projection files written by the real pipeline:
// PostgreSQL (the dev world's seed generator) → Debezium → Kafka → ingest → SQLite. What `pnpm pda projections`
// reports, copies and exports must be what PostgreSQL holds: row counts, ids, money as the exact
// decimal text of numeric(12,2). The snapshot is taken while PostgreSQL keeps writing and ingest
// keeps applying.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPda } from '@pda/analysts/testing';
import { deleteCompanies, seedDatabase } from '@pda/dev-world/seed';
import { companyPath, latestVersion, openReader } from '@pda/projections/model';
import { parquetReadObjects } from 'hyparquet';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, waitFor } from './src/stack-env.ts';

const COUNTS = {
  companies: 2,
  sites: 40,
  contactsPerSite: 1,
  services: 6,
  categories: 3,
  equipment: 8,
  consumables: 4,
};
const TABLES = [
  'sites',
  'site_contacts',
  'services',
  'equipment_categories',
  'equipment',
  'consumables',
] as const;

let pool: pg.Pool;
let readSide: ReadSide;
let companyIds: string[] = [];
let out: string;

async function pgCounts(companyId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE company_id = $1`, [
      companyId,
    ]);
    counts[table] = rows[0].n;
  }
  return counts;
}

function fileCount(companyId: string, table: string): number {
  const db = openReader(companyPath(readSide.dataDir, companyId));
  try {
    return (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const pda = (...args: string[]) => runPda(['projections', ...args], { PDA_DATA_DIR: readSide.dataDir });

beforeAll(async () => {
  pool = pgPool();
  out = mkdtempSync(join(tmpdir(), 'analysts-e2e-out-'));
  const client = await pool.connect();
  try {
    companyIds = (await seedDatabase(client, { seed: `analysts-e2e-${Date.now()}`, counts: COUNTS }))
      .companyIds;
  } finally {
    client.release();
  }
  readSide = await startReadSide({ name: 'analysts' });
  // Each table is its own topic, consumed in parallel: wait for every one of them.
  const expected = await Promise.all(companyIds.map(pgCounts));
  await waitFor(
    'both seeded companies to be projected, every table',
    () =>
      companyIds.every((id, i) => {
        try {
          return TABLES.every((table) => fileCount(id, table) === expected[i]?.[table]);
        } catch {
          return false;
        }
      }),
    { timeoutMs: 240_000, intervalMs: 500 },
  );
});

afterAll(async () => {
  await readSide?.close();
  if (pool && companyIds.length > 0) {
    const client = await pool.connect();
    try {
      await deleteCompanies(client, companyIds);
    } finally {
      client.release();
    }
  }
  await pool?.end();
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('pnpm pda projections on files the real pipeline wrote', () => {
  it('companies: the rows per table PostgreSQL holds, the company names, a small ingest lag', async () => {
    const result = await pda('companies', '--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      companies: {
        id: string;
        name: string;
        file: { rows: Record<string, number>; schemaVersion: number } | null;
      }[];
      ingest: { lagSeconds: number | null };
    };
    for (const id of companyIds) {
      const company = summary.companies.find((c) => c.id === id);
      const { rows } = await pool.query('SELECT name FROM companies WHERE id = $1', [id]);
      expect(company?.name).toBe(rows[0].name);
      expect(company?.file?.schemaVersion).toBe(latestVersion('company'));
      expect(company?.file?.rows).toMatchObject({ ...(await pgCounts(id)), tombstones: 0 });
    }
    expect(summary.ingest.lagSeconds).not.toBeNull();
    expect(summary.ingest.lagSeconds ?? Infinity).toBeLessThan(600);
  });

  it('snapshot --all while PostgreSQL writes: a checked database whose untouched company equals PostgreSQL', async () => {
    const [busy, quiet] = companyIds as [string, string];
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) {
        await pool.query(`INSERT INTO sites (company_id, name) VALUES ($1, $2)`, [
          busy,
          `Written during the snapshot ${++n}`,
        ]);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return n;
    })();
    const file = join(out, 'analysis.sqlite');
    const result = await pda('snapshot', '--all', '--out', file);
    writing = false;
    const written = await writes;
    expect(result.code, result.stderr).toBe(0);
    expect(written).toBeGreaterThan(0);

    const db = openReader(file);
    try {
      expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
      const services = db
        .prepare(
          'SELECT id, name, client_rate_amount, client_rate_currency, subcontractor_rate_amount FROM services WHERE company_id = ? ORDER BY id',
        )
        .all(quiet);
      const { rows } = await pool.query(
        `SELECT id::text, name, client_rate_amount::text, client_rate_currency::text, subcontractor_rate_amount::text
           FROM services WHERE company_id = $1 ORDER BY id::text`,
        [quiet],
      );
      expect(services).toEqual(rows);
      const siteIds = db.prepare('SELECT id FROM sites WHERE company_id = ? ORDER BY id').pluck().all(quiet);
      const pgSites = await pool.query('SELECT id::text FROM sites WHERE company_id = $1 ORDER BY id::text', [
        quiet,
      ]);
      expect(siteIds).toEqual(pgSites.rows.map((row: { id: string }) => row.id));
      // The busy company: a whole state of its file, somewhere between the seed and the last write.
      const busySites = db
        .prepare('SELECT count(*) FROM sites WHERE company_id = ?')
        .pluck()
        .get(busy) as number;
      expect(busySites).toBeGreaterThanOrEqual(COUNTS.sites);
      expect(busySites).toBeLessThanOrEqual(COUNTS.sites + written);
    } finally {
      db.close();
    }
  });

  it('export parquet: the money PostgreSQL stores, as exact decimal strings', async () => {
    const [, quiet] = companyIds as [string, string];
    const file = join(out, 'consumables.parquet');
    const result = await pda(
      'export',
      '--company',
      quiet,
      '--table',
      'consumables',
      '--format',
      'parquet',
      '--out',
      file,
    );
    expect(result.code, result.stderr).toBe(0);
    const bytes = readFileSync(file);
    const rows = (await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      columns: ['id', 'group_name', 'default_client_rate_amount', 'default_client_rate_currency'],
    })) as Record<string, unknown>[];
    const expected = await pool.query(
      `SELECT id::text, group_name, default_client_rate_amount::text, default_client_rate_currency::text
         FROM consumables WHERE company_id = $1`,
      [quiet],
    );
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.id).localeCompare(String(b.id));
    expect([...rows].sort(byId)).toEqual([...expected.rows].sort(byId));
  });

  it('sql: answers from the live file and refuses to write to it', async () => {
    const [busy] = companyIds as [string];
    const count = await pda(
      'sql',
      '--company',
      busy,
      '--format',
      'csv',
      'SELECT count(*) AS n FROM equipment',
    );
    expect(count.stdout).toBe(`n\r\n${COUNTS.equipment}\r\n`);
    const refused = await pda('sql', '--company', busy, 'DELETE FROM equipment');
    expect(refused.code).toBe(2);
    expect(fileCount(busy, 'equipment')).toBe(COUNTS.equipment);
  });
});
