/**
 * reconcile's speed on one large company: rows compared per second and the process's peak RSS
 * (the comparison streams both sides in key order, so memory must not grow with the company).
 *
 *   node bench/operator-tools/reconcile-speed.ts [--sites N] [--keep]
 *
 * The company is seeded (the dev world's seed, N sites with one contact each, default 100,000) into a schema of
 * its own, `bench_reconcile`, in the stack's PostgreSQL: not captured by Debezium, so the shared
 * topics are not loaded with it. Its projection is written by the projections' apply path
 * (ProjectionStore.applyBatch, what ingest calls) from the same rows, into a temp data dir. Then
 * reconcile runs twice over it (the first run reads cold pages) in a child process of its own, so
 * its peak RSS is reconcile's alone, and prints one line per run. `--keep` keeps the schema for the
 * next run (same rows: no new seed).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_COUNTS, seedDatabase } from '@pda/dev-world/seed';
import { readStackEnv } from '@pda/dev-world/stack';
import { pgConfigFromEnv } from '@pda/operator-tools/pg';
import { reconcile } from '@pda/operator-tools/reconcile';
import { makeUpsert } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import pg from 'pg';
import { SourceReader } from '../../operator-tools/reconcile/source.ts';
import { CONTROL_PLANS, TENANT_PLANS } from '../../operator-tools/reconcile/tables.ts';
import { repoRoot } from '../shared/paths.ts';

const SCHEMA = 'bench_reconcile';
const { values } = parseArgs({
  options: {
    sites: { type: 'string', default: '100000' },
    keep: { type: 'boolean', default: false },
    // Internal: the child that measures (--measure <dataDir> --company <id>).
    measure: { type: 'string' },
    company: { type: 'string' },
  },
});
const sites = Number(values.sites);
const pgConfig = pgConfigFromEnv({ ...readStackEnv(), ...process.env });

if (values.measure !== undefined) {
  for (const run of ['cold', 'warm']) {
    const report = await reconcile({
      pg: pgConfig,
      dataDir: values.measure,
      companies: [values.company!],
      sourceSchema: SCHEMA,
    });
    // ru_maxrss: KiB, the process's peak so far.
    const peakMiB = Math.round(process.resourceUsage().maxRSS / 1024);
    console.log(
      `reconcile (${run}): ${report.totals.sourceRows} source rows, ${report.totals.projectionRows} projection rows, ` +
        `${report.totals.differences} differences in ${(report.durationMs / 1000).toFixed(1)} s: ` +
        `${report.rowsPerSecond} rows/s, peak RSS ${peakMiB} MiB`,
    );
  }
  process.exit(0);
}

const client = new pg.Client(pgConfig);
await client.connect();

async function seed(): Promise<string> {
  const existing = await client
    .query(`SELECT id::text AS id FROM "${SCHEMA}".companies LIMIT 1`)
    .then((r) => r.rows[0]?.id as string | undefined)
    .catch(() => undefined);
  if (existing && values.keep) return existing;
  await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE; CREATE SCHEMA "${SCHEMA}"`);
  await client.query(`SET search_path TO "${SCHEMA}", public`);
  await client.query(readFileSync(join(repoRoot, 'dev-world', 'db', 'schema.sql'), 'utf8'));
  const started = performance.now();
  const result = await seedDatabase(client, {
    seed: 'reconcile-bench',
    counts: {
      ...DEFAULT_COUNTS,
      companies: 1,
      sites,
      contactsPerSite: 1,
      equipment: 2_000,
      consumables: 500,
    },
  });
  await client.query('RESET search_path');
  console.log(`seeded ${result.rows} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result.companyIds[0]!;
}

/** The company's projection, written by the apply path from the source rows (a batch per FETCH). */
async function project(company: string, dataDir: string): Promise<number> {
  const reader = await SourceReader.load(client, [...TENANT_PLANS, ...CONTROL_PLANS], SCHEMA);
  const store = ProjectionStore.open({ dataDir });
  let lsn = 1;
  let rows = 0;
  try {
    await reader.begin();
    for (const plan of [...CONTROL_PLANS, ...TENANT_PLANS]) {
      const filter =
        plan.table === 'companies'
          ? { where: 'id = $1', params: [company] }
          : plan.kind === 'tenant'
            ? { where: 'company_id = $1', params: [company] }
            : { where: 'false', params: [] };
      for await (const batch of reader.rows(plan, filter, 5_000)) {
        const changes = batch.map((values) => {
          const row = Object.fromEntries(
            plan.columns.map((c, i) => [c, values[i] as string | number | null]),
          );
          return makeUpsert(
            plan.table,
            plan.kind === 'tenant' ? { ...row, company_id: company } : row,
            lsn++,
          );
        });
        store.applyBatch(changes);
        rows += batch.length;
      }
    }
    await reader.end();
  } finally {
    store.close();
  }
  return rows;
}

const dataDir = mkdtempSync(join(tmpdir(), 'reconcile-bench-'));
try {
  const company = await seed();
  const started = performance.now();
  const projected = await project(company, dataDir);
  console.log(`projected ${projected} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const args = [import.meta.filename, '--measure', dataDir, '--company', company];
  process.stdout.write(execFileSync(process.execPath, args, { encoding: 'utf8' }));
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  if (!values.keep) await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await client.end();
}
