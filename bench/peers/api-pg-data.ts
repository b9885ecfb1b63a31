/**
 * The PostgreSQL peer's data: the same site rows as the projection file (bench/shared/api-fixture.ts,
 * same generator, seed and timestamps) in `bench_api.sites`, an UNLOGGED copy of public.sites with
 * its indexes (primary key, (company_id, id)). Unlogged and outside the publication: loading a
 * million rows writes no WAL for Debezium to capture and never reaches the stack's topics.
 * Loaded once; a later run with the same seed and size reuses it.
 */
import type pg from 'pg';
import { siteRows } from '../shared/api-fixture.ts';

const CHUNK = 5_000;

export async function ensurePgSites(client: pg.Client, seed: string, sites: number): Promise<number> {
  await client.query('CREATE SCHEMA IF NOT EXISTS bench_api');
  await client.query(
    'CREATE UNLOGGED TABLE IF NOT EXISTS bench_api.sites (LIKE public.sites INCLUDING DEFAULTS INCLUDING INDEXES)',
  );
  await client.query(
    'CREATE TABLE IF NOT EXISTS bench_api.loaded (seed text NOT NULL, sites integer NOT NULL)',
  );
  const loaded = await client.query<{ seed: string; sites: number }>(
    'SELECT seed, sites FROM bench_api.loaded',
  );
  if (loaded.rows[0]?.seed === seed && loaded.rows[0]?.sites === sites) return 0;

  const started = performance.now();
  await client.query('TRUNCATE bench_api.sites, bench_api.loaded');
  let chunk: unknown[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    await client.query(
      'INSERT INTO bench_api.sites SELECT * FROM json_populate_recordset(NULL::bench_api.sites, $1::json)',
      [JSON.stringify(chunk)],
    );
    chunk = [];
  };
  for (const row of siteRows(seed, sites)) {
    chunk.push(row);
    if (chunk.length >= CHUNK) await flush();
  }
  await flush();
  await client.query('ANALYZE bench_api.sites');
  await client.query('INSERT INTO bench_api.loaded (seed, sites) VALUES ($1, $2)', [seed, sites]);
  return Math.round((performance.now() - started) / 100) / 10;
}
