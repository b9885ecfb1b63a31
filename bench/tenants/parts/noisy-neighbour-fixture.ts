/**
 * Inputs of bench/tenants/noisy-neighbour.ts, built once and cached under .data/bench/: one data
 * directory with two companies, each with a key of its own.
 *
 * - hostile: api-list's company (bench/shared/api-fixture.ts, N sites written in created_at order), whose
 *   newest 10 % by created_at were then changed again, after the rest (one upsert each through
 *   the apply path, with a later updated_at): their change times sit after every other one, at
 *   the end of the created_at and updated_at orders — the clustered worst case of a since walk.
 *   Before that change an api issued a sync token (the last page of a since walk that matched
 *   nothing, sorted by created_at): the token a partner holds who synced before the bulk update,
 *   whose walk lists exactly the changed rows. The api's cursor secret is kept with the fixture,
 *   so the token stays valid in every run.
 * - victim: a company of its own (another seed) with M sites, and a key granted only it.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Change, Row } from '@pda/projections/model';
import { freePort, makeUpsert } from '@pda/projections/testing';
import { openCompanyWriter, openControlWriter, ProjectionStore } from '@pda/projections/write';
import { companyHead, listFixture, siteRows } from '../../shared/api-fixture.ts';
import { answersHealth, benchApiEnv, startServer } from '../../shared/api-processes.ts';
import { repoRoot } from '../../shared/paths.ts';

export interface Tenant {
  readonly companyId: string;
  /** The raw key (bench only; regenerated with the fixture). */
  readonly key: string;
  readonly sites: number;
}

export interface NoisyFixture {
  readonly dataDir: string;
  /** API_CURSOR_SECRET of every run: the hostile token was signed with it. */
  readonly cursorSecret: string;
  readonly hostile: Tenant & {
    /** Sites changed after the rest (the newest by created_at). */
    readonly changed: number;
    /** The first change time (ms) of the changed sites; every other site changed before it. */
    readonly changedFromMs: number;
    /** Path and query of the token walk's first page (links.sync: sort=created_at, limit=200). */
    readonly syncPath: string;
  };
  readonly victim: Tenant;
  readonly buildSeconds: number;
}

const VICTIM_SEED = 'bench-victim';
const VICTIM_KEY_ID = '00000000-0000-4000-8000-00000000be9d';
// Above every position the hostile company's build used (one per change from 1), so the apply
// path takes these changes as newer.
const VICTIM_LSN = 50_000_000;
const CHANGED_LSN = 60_000_000;
const CHUNK = 20_000;
/** updated_at of the changed sites: after every created_at of the fixture (a second apart from 2025-01-01). */
const CHANGED_BASE_MS = Date.UTC(2025, 6, 1);

export async function noisyFixture(
  root: string,
  hostileSites: number,
  victimSites: number,
): Promise<NoisyFixture> {
  const base = listFixture(root, hostileSites);
  const dataDir = join(root, `noisy-${hostileSites}-${victimSites}`);
  const marker = join(dataDir, 'fixture.json');
  if (existsSync(marker)) {
    const cached = JSON.parse(readFileSync(marker, 'utf8')) as NoisyFixture;
    openControlWriter(dataDir).close();
    for (const tenant of [cached.hostile, cached.victim])
      openCompanyWriter(dataDir, tenant.companyId).close();
    return cached;
  }

  const started = performance.now();
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 'companies'), { recursive: true });
  for (const name of ['control.sqlite', `companies/${base.companyId}.sqlite`]) {
    const wal = join(base.dataDir, `${name}-wal`);
    if (existsSync(wal) && statSync(wal).size > 0) throw new Error(`${wal} is not checkpointed`);
    copyFileSync(join(base.dataDir, name), join(dataDir, name));
  }
  const victim = addVictim(dataDir, victimSites);
  const cursorSecret = randomBytes(32).toString('hex');
  const syncPath = await tokenBeforeTheChange(dataDir, cursorSecret, base.key);
  const changed = Math.round(hostileSites / 10);
  const changedFromMs = changeNewest(dataDir, base.companyId, base.seed, hostileSites, changed);
  const fixture: NoisyFixture = {
    dataDir,
    cursorSecret,
    hostile: {
      companyId: base.companyId,
      key: base.key,
      sites: hostileSites,
      changed,
      changedFromMs,
      syncPath,
    },
    victim,
    buildSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  writeFileSync(marker, JSON.stringify(fixture, null, 2));
  return fixture;
}

/** The victim company, its sites and its key, through the apply path. */
function addVictim(dataDir: string, sites: number): Tenant {
  const store = ProjectionStore.open({ dataDir });
  let lsn = VICTIM_LSN;
  const { companyId, key, changes } = companyHead(
    VICTIM_SEED,
    sites,
    { id: VICTIM_KEY_ID, name: 'bench-victim' },
    () => lsn++,
  );
  let batch: Change[] = changes;
  const flush = () => {
    if (batch.length > 0) store.applyBatch(batch);
    batch = [];
  };
  try {
    for (const row of siteRows(VICTIM_SEED, sites)) {
      batch.push(makeUpsert('sites', row as unknown as Row, lsn++));
      if (batch.length >= CHUNK) flush();
    }
    flush();
  } finally {
    store.close();
  }
  return { companyId, key, sites };
}

/**
 * links.sync of a since walk that matches nothing (one empty last page), asked of an api process
 * on the directory: a token whose watermark is the hostile file's last change time before the
 * change below.
 */
async function tokenBeforeTheChange(dataDir: string, cursorSecret: string, key: string): Promise<string> {
  const port = await freePort();
  const server = await startServer(
    'api (fixture token)',
    join(repoRoot, 'api', 'src', 'main.ts'),
    port,
    benchApiEnv(dataDir, port, { API_CURSOR_SECRET: cursorSecret, API_ADMIN_PORT: String(await freePort()) }),
    answersHealth,
  );
  try {
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const url = `${server.base}/v1/sites?sort=created_at&limit=200&filter[updated_since]=${future}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    const body = (await response.json()) as {
      data: unknown[];
      links: { next: string | null; sync?: string };
    };
    if (response.status !== 200 || body.data.length > 0 || body.links.next !== null || !body.links.sync)
      throw new Error(`the token walk answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    const sync = new URL(body.links.sync);
    return `${sync.pathname}${sync.search}`;
  } finally {
    await server.stop();
  }
}

/**
 * Upserts the `changed` newest sites (by created_at: the generator's last) again with a later
 * updated_at; returns the first change time they got (ms), checked to be after every other site's.
 */
function changeNewest(
  dataDir: string,
  companyId: string,
  seed: string,
  sites: number,
  changed: number,
): number {
  const store = ProjectionStore.open({ dataDir });
  let lsn = CHANGED_LSN;
  let batch: Change[] = [];
  let index = 0;
  try {
    for (const row of siteRows(seed, sites)) {
      if (index++ < sites - changed) continue;
      const updatedAt = new Date(CHANGED_BASE_MS + index * 1_000).toISOString().replace('Z', '000Z');
      batch.push(
        makeUpsert('sites', { ...row, updated_at: updatedAt } as unknown as Row, lsn++, { op: 'u' }),
      );
      if (batch.length >= CHUNK) {
        store.applyBatch(batch);
        batch = [];
      }
    }
    if (batch.length > 0) store.applyBatch(batch);
  } finally {
    store.close();
  }
  const db = openCompanyWriter(dataDir, companyId);
  try {
    const times = db
      .prepare(
        `SELECT max(CASE WHEN _src_lsn < @lsn THEN _changed_us END) AS before,
                min(CASE WHEN _src_lsn >= @lsn THEN _changed_us END) AS first,
                sum(_src_lsn >= @lsn) AS count
           FROM sites`,
      )
      .get({ lsn: CHANGED_LSN }) as { before: number; first: number; count: number };
    const fromMs = Math.floor(times.first / 1000);
    if (times.count !== changed || fromMs * 1000 <= times.before)
      throw new Error(`the changed sites are not after the rest: ${JSON.stringify(times)}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    return fromMs;
  } finally {
    db.close();
  }
}
