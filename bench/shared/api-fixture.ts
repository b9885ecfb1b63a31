/**
 * Inputs of the api benchmark (bench/api/list.ts), built once and cached under .data/bench/:
 * one company with N sites (the dev world's deterministic seed generator) in a projection file built through
 * the projections apply path (ProjectionStore.applyBatch, what ingest does), one API key in
 * control.sqlite. The PostgreSQL peer's copy of the same rows is in bench/peers/api-pg-data.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCompanyData, type SiteRow } from '@pda/dev-world/seed';
import type { Change, Row } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { openCompanyWriter, openControlWriter, ProjectionStore } from '@pda/projections/write';

export interface ListFixture {
  readonly dataDir: string;
  readonly companyId: string;
  /** The raw key (bench only; regenerated with the fixture). */
  readonly key: string;
  readonly sites: number;
  readonly seed: string;
  /** A site id from the middle of the id order, for the item benchmark. */
  readonly middleSiteId: string;
  readonly buildSeconds: number;
}

/** The scopes of the fixture's keys: every collection. */
export const FIXTURE_SCOPES = [
  'sites:read',
  'services:read',
  'equipment:read',
  'equipment-categories:read',
  'consumables:read',
];
const CHUNK = 20_000;
const BASE_MS = Date.UTC(2025, 0, 1);

/** Every site row of the fixture company, with database-maintained timestamps filled in. */
export function* siteRows(
  seed: string,
  sites: number,
): Generator<SiteRow & { created_at: string; updated_at: string }> {
  let index = 0;
  for (const { table, row } of generateCompanyData(seed, fixtureCounts(sites))) {
    if (table !== 'sites') continue;
    // A second apart, so created_at/updated_at sorts are not all ties.
    const at = new Date(BASE_MS + index++ * 1_000).toISOString().replace('Z', '000Z');
    yield { ...(row as SiteRow), created_at: at, updated_at: at };
  }
}

/** The seed generator's counts of a fixture company: `sites` sites, no contacts, a small catalogue. */
export function fixtureCounts(sites: number) {
  return {
    companies: 1,
    sites,
    contactsPerSite: 0,
    services: 8,
    categories: 4,
    equipment: 12,
    consumables: 6,
  };
}

export function listFixture(root: string, sites: number, seed = 'bench-api'): ListFixture {
  const dataDir = join(root, `sites-${sites}-${seed}`);
  const marker = join(dataDir, 'fixture.json');
  if (existsSync(marker)) {
    const cached = JSON.parse(readFileSync(marker, 'utf8')) as ListFixture;
    // Built by an older version: bring the files to this code's schema and stored documents, as
    // ingest does when it opens them (cheap when they are current).
    openControlWriter(dataDir).close();
    openCompanyWriter(dataDir, cached.companyId).close();
    return cached;
  }

  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();
  const store = ProjectionStore.open({ dataDir });
  let lsn = 1;
  let companyId = '';
  let batch: Change[] = [];
  const flush = () => {
    if (batch.length > 0) store.applyBatch(batch);
    batch = [];
  };
  const _at = new Date(BASE_MS).toISOString().replace('Z', '000Z');
  try {
    const head = companyHead(
      seed,
      sites,
      { id: '00000000-0000-4000-8000-00000000be9c', name: 'bench' },
      () => lsn++,
    );
    const { key } = head;
    companyId = head.companyId;
    batch.push(...head.changes);
    flush();
    const ids: string[] = [];
    for (const row of siteRows(seed, sites)) {
      if (ids.length < 2 || Math.random() < 0.001) ids.push(row.id);
      batch.push(makeUpsert('sites', row as unknown as Row, lsn++));
      if (batch.length >= CHUNK) flush();
    }
    flush();
    ids.sort();
    const fixture: ListFixture = {
      dataDir,
      companyId,
      key,
      sites,
      seed,
      middleSiteId: ids[Math.floor(ids.length / 2)] ?? '',
      buildSeconds: Math.round((performance.now() - started) / 100) / 10,
    };
    writeFileSync(marker, JSON.stringify(fixture, null, 2));
    return fixture;
  } finally {
    store.close();
  }
}

/**
 * What a seeded company's fixture writes before its sites: the generator's catalogue rows (every
 * table before the sites, dated BASE_MS) and a key granted the company with FIXTURE_SCOPES, at the
 * positions `next()` hands out. The raw key derives from the seed.
 */
export function companyHead(
  seed: string,
  sites: number,
  keyRow: { readonly id: string; readonly name: string },
  next: () => number,
): { companyId: string; key: string; changes: Change[] } {
  const at = new Date(BASE_MS).toISOString().replace('Z', '000Z');
  const changes: Change[] = [];
  let companyId = '';
  for (const { table, row } of generateCompanyData(seed, fixtureCounts(sites))) {
    // Catalogue rows come before the sites in the generator's order; sites are streamed apart.
    if (table === 'sites') break;
    if (table === 'companies') companyId = String(row.id);
    changes.push(makeUpsert(table, { ...(row as unknown as Row), created_at: at, updated_at: at }, next()));
  }
  const key = `svc_pk_bench${createHash('sha256').update(seed).digest('hex').slice(0, 36)}`;
  changes.push(
    makeUpsert(
      'api_keys',
      sampleRow('api_keys', {
        id: keyRow.id,
        name: keyRow.name,
        last_four: key.slice(-4),
        key_sha256: createHash('sha256').update(key).digest('hex'),
        scopes: FIXTURE_SCOPES,
      }),
      next(),
    ),
    makeUpsert(
      'api_key_companies',
      sampleRow('api_key_companies', { api_key_id: keyRow.id, company_id: companyId }),
      next(),
    ),
  );
  return { companyId, key, changes };
}
