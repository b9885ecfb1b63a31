// reconcile (@pda/operator-tools/reconcile, `pnpm -s reconcile`) on the real pipeline: PostgreSQL → Debezium → Kafka →
// ingest → SQLite. A company written through PostgreSQL reconciles with no difference; damage done
// to its projection file directly (a row deleted, a column changed, a stored document changed, a
// row added) is reported exactly, with ids and columns, and the CLI exits 1; a projection that can
// no longer catch up is reported as not caught up, never as different; and a run while a writer
// keeps changing rows reports nothing, because rows merely in flight settle.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reconcile } from '@pda/operator-tools/reconcile';
import { companyPath, controlPath } from '@pda/projections/model';
import { openWriter } from '@pda/projections/write';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCompany, writeRandomly } from './src/random-writer.ts';
import { issueKey, type ReadSide, startReadSide } from './src/read-side.ts';
import { pgPool, repoRoot, waitFor } from './src/stack-env.ts';

let pool: pg.Pool;
let readSide: ReadSide;
const company = randomUUID();
const clean = randomUUID();

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `pnpm -s reconcile …` as a process (the script runs this file with node). */
function runCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'operator-tools', 'reconcile', 'main.ts'), ...args],
      { cwd: repoRoot, env: process.env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Writes a company with every captured table and every kind of column through PostgreSQL. */
async function writeCompany(id: string, name: string): Promise<void> {
  await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, $2, 'CAD')", [id, name]);
  await seedCompany(pool, id, 12);
  await pool.query(
    `UPDATE services SET client_rate_amount = 9999999998.99, subcontractor_rate_amount = -0.01
      WHERE id = (SELECT id FROM services WHERE company_id = $1 ORDER BY id LIMIT 1)`,
    [id],
  );
  await pool.query(
    `UPDATE sites SET geocoded_at = '2026-01-31T12:00:01.123456+05:00', area = 1250.5
      WHERE id = (SELECT id FROM sites WHERE company_id = $1 ORDER BY id LIMIT 1)`,
    [id],
  );
  await issueKey(pool, id, ['sites:read', 'services:read'], `reconcile e2e ${name}`);
}

/** Until the projection of `companies` equals PostgreSQL (no waiting inside reconcile). */
async function untilEqual(companies: string[], dataDir = readSide.dataDir): Promise<void> {
  await waitFor(
    `the projection of ${companies.join(', ')} to equal PostgreSQL`,
    async () => (await reconcile({ pg: pool, dataDir, companies, waitMs: 0 })).ok,
    { timeoutMs: 120_000, intervalMs: 1_000 },
  );
}

/** A copy of control.sqlite and of `companies`' files, that no ingest writes. */
function copyProjection(companies: string[]): string {
  const copy = mkdtempSync(join(tmpdir(), 'reconcile-copy-'));
  mkdirSync(join(copy, 'companies'));
  const files = [
    [controlPath(readSide.dataDir), controlPath(copy)],
    ...companies.map((id) => [companyPath(readSide.dataDir, id), companyPath(copy, id)]),
  ];
  for (const [from, to] of files) {
    // VACUUM INTO needs a connection that may write (it writes the copy, not this file).
    const db = openWriter(from!);
    try {
      db.prepare('VACUUM INTO ?').run(to);
    } finally {
      db.close();
    }
  }
  return copy;
}

const firstId = async (table: string, id = company): Promise<string> =>
  (await pool.query(`SELECT id::text AS id FROM ${table} WHERE company_id = $1 ORDER BY id LIMIT 1`, [id]))
    .rows[0].id;

beforeAll(async () => {
  pool = pgPool();
  readSide = await startReadSide({ name: 'reconcile' });
  await writeCompany(company, 'Reconcile Damage Ltd');
  await writeCompany(clean, 'Reconcile Clean Ltd');
  await untilEqual([company, clean]);
});

afterAll(async () => {
  await readSide?.close();
  await pool?.end();
});

describe('reconcile on the real pipeline', () => {
  it('finds no difference in a company written through PostgreSQL → Debezium → ingest', async () => {
    const progress: string[] = [];
    const report = await reconcile({
      pg: pool,
      dataDir: readSide.dataDir,
      companies: [company],
      waitMs: 60_000,
      // Small batches: every table goes through the cursor and the keyset pages, not one query.
      batchRows: 5,
      onProgress: (p) => progress.push(p.kind),
    });
    expect(report.differences).toEqual([]);
    expect(report.unsettled).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.verifiedThrough?.lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const [checked] = report.companies;
    expect(checked?.tables.map((t) => t.table)).toEqual([
      'sites',
      'site_contacts',
      'services',
      'equipment_categories',
      'equipment',
      'consumables',
    ]);
    const sites = checked?.tables.find((t) => t.table === 'sites');
    expect(sites).toEqual({ table: 'sites', sourceRows: 12, projectionRows: 12 });
    expect(report.control.tables.find((t) => t.table === 'api_key_companies')?.sourceRows).toBe(1);
    expect(report.totals.sourceRows).toBe(checked!.sourceRows + 3); // the company, its key, its grant
    expect(progress).toContain('company');
  });

  it('reports damage done to the projection file exactly: ids, kinds and columns', async () => {
    const [site, service, equipment, consumable] = await Promise.all(
      ['sites', 'services', 'equipment', 'consumables'].map((t) => firstId(t)),
    );
    const { rows } = await pool.query<{ amount: string }>(
      'SELECT client_rate_amount::text AS amount FROM services WHERE id = $1',
      [service],
    );
    const extra = randomUUID();
    const db = openWriter(companyPath(readSide.dataDir, company));
    try {
      db.prepare('DELETE FROM sites WHERE id = ?').run(site);
      db.prepare("UPDATE services SET client_rate_amount = '0.01' WHERE id = ?").run(service);
      db.prepare(`UPDATE equipment SET "_json" = '{"tampered":true}' WHERE id = ?`).run(equipment);
      const columns = (db.prepare('PRAGMA table_info(consumables)').all() as { name: string }[]).map(
        (c) => `"${c.name}"`,
      );
      db.prepare(
        `INSERT INTO consumables (${columns.join(', ')})
         SELECT ${columns.map((c) => (c === '"id"' ? '?' : c)).join(', ')} FROM consumables WHERE id = ?`,
      ).run(extra, consumable);
    } finally {
      db.close();
    }

    const report = await reconcile({ pg: pool, dataDir: readSide.dataDir, companies: [company, clean] });
    expect(report.ok).toBe(false);
    expect(report.notCaughtUp).toBeNull();
    expect(report.unsettled).toEqual([]);
    expect(report.differences).toEqual(
      [
        { companyId: company, table: 'consumables', id: extra, kind: 'extra' },
        {
          companyId: company,
          table: 'equipment',
          id: equipment,
          kind: 'different',
          columns: [
            {
              name: '_json',
              source: expect.stringContaining(`"id":"${equipment}"`),
              projection: '{"tampered":true}',
            },
          ],
        },
        {
          companyId: company,
          table: 'services',
          id: service,
          kind: 'different',
          columns: [{ name: 'client_rate_amount', source: rows[0]!.amount, projection: '0.01' }],
        },
        { companyId: company, table: 'sites', id: site, kind: 'missing' },
      ].sort((a, b) => a.table.localeCompare(b.table)),
    );
    expect(report.totals).toMatchObject({ differences: 4, missing: 1, extra: 1, different: 2, unsettled: 0 });
    expect(report.companies.find((c) => c.companyId === clean)?.differences).toBe(0);
    expect(report.verifiedThrough).not.toBeNull();
  });

  it('the CLI exits 1 with the differences (text and --json), 0 on a clean company, 2 on bad input', async () => {
    const dataDir = ['--data-dir', readSide.dataDir];
    const json = await runCli(['--company', company, ...dataDir, '--json', '--wait-s', '60']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.totals.differences).toBe(4);
    expect(report.differences.map((d: { kind: string }) => d.kind).sort()).toEqual([
      'different',
      'different',
      'extra',
      'missing',
    ]);

    const text = await runCli(['--company', company, ...dataDir]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/differences: 4 \(missing 1, extra 1, different 2\)/);
    expect(text.stdout).toMatch(/client_rate_amount: source "[-0-9.]+", projection "0\.01"/);
    expect(text.stdout).toMatch(/result: differences found/);

    const ok = await runCli(['--company', clean, ...dataDir]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/verified through: LSN [0-9A-F]+\/[0-9A-F]+/);
    expect(ok.stdout).toMatch(/result: no differences/);

    expect((await runCli(['--help'])).code).toBe(0);
    // A data dir whose company file is not a database (corrupted on disk).
    const corrupt = copyProjection([]);
    writeFileSync(companyPath(corrupt, clean), 'not a database'.repeat(400));
    for (const [args, message] of [
      [['--company', clean, '--data-dir', corrupt], /^error: projection file .* could not be read/],
      [['--wait-s', 'soon', ...dataDir], /^error: --wait-s must be a whole number/],
      [['--company', 'ACME', ...dataDir], /^error: not a company id/],
      [['--data-dir', join(tmpdir(), `no-such-${randomUUID()}`)], /^error: projection file not found/],
      [['--pg-url', 'postgres://pda:pda@127.0.0.1:9/pda', ...dataDir], /^error: cannot reach PostgreSQL/],
      [['stray', ...dataDir], /^error: unexpected argument "stray"/],
    ] as const) {
      const result = await runCli([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });

  it('says "not caught up" (exit 1), not "different", when the projection cannot reach the source', async () => {
    // A copy of the projection that no ingest writes: a change made after it never lands there.
    const copy = copyProjection([clean]);
    const { rows } = await pool.query<{ id: string }>(
      "INSERT INTO sites (company_id, name) VALUES ($1, 'Opened after the copy') RETURNING id::text AS id",
      [clean],
    );
    const report = await reconcile({ pg: pool, dataDir: copy, companies: [clean], waitMs: 3_000 });
    expect(report.ok).toBe(false);
    expect(report.differences).toEqual([]);
    expect(report.unsettled).toEqual([
      { companyId: clean, table: 'sites', id: rows[0]!.id, kind: 'missing' },
    ]);
    expect(report.notCaughtUp?.reason).toMatch(/did not catch up/);
    expect(report.verifiedThrough).toBeNull();

    const cli = await runCli(['--company', clean, '--data-dir', copy, '--wait-s', '2']);
    expect(cli.code).toBe(1);
    expect(cli.stdout).toMatch(/not caught up: /);
    expect(cli.stdout).toMatch(/result: not caught up/);
    // The live projection gets it: nothing to report there.
    await untilEqual([clean]);
  });

  it('reports no difference while a writer keeps changing rows (rows in flight settle)', async () => {
    const busy = randomUUID();
    const other = randomUUID();
    for (const [id, name] of [
      [busy, 'Reconcile Busy Ltd'],
      [other, 'Reconcile Other Ltd'],
    ]) {
      await pool.query("INSERT INTO companies (id, name, currency) VALUES ($1, $2, 'USD')", [id, name]);
    }
    await seedCompany(pool, busy, 40);
    await untilEqual([busy, other]);

    const writing = writeRandomly(pool, { company: busy, other }, { ms: 40_000 });
    const rechecks: number[] = [];
    const reports = [];
    try {
      for (let run = 0; run < 3; run++) {
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        reports.push(
          await reconcile({
            pg: pool,
            dataDir: readSide.dataDir,
            companies: [busy, other],
            waitMs: 60_000,
            onProgress: (p) => {
              if (p.kind === 'recheck') rechecks.push(p.rows);
            },
          }),
        );
      }
    } finally {
      const summary = await writing;
      expect(Object.values(summary.committed).reduce((a, b) => a + b, 0)).toBeGreaterThan(100);
    }
    for (const report of reports) {
      expect(report.differences).toEqual([]);
      expect(report.unsettled).toEqual([]);
      expect(report.ok).toBe(true);
    }
    // Written for the log: how many rows were in flight when the runs read them.
    console.info(`reconcile under writes: rows read again per round ${JSON.stringify(rechecks)}`);
  });
});
