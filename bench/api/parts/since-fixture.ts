/**
 * Inputs of the since-page benchmark (bench/api/since.ts), built once and cached under .data/bench/.
 *
 * - `clustered`: api-list's fixture as it is (bench/shared/api-fixture.ts). Its rows were written in
 *   created_at order, so their change times follow created_at, updated_at and rowid: a since that
 *   matches M rows matches the M newest, the end of those sort orders (the worst case of a walk).
 * - `shuffled`: a copy of it whose change times are a seeded random permutation, one millisecond
 *   apart, so a since in milliseconds (what filter[updated_since] carries) matches exactly M
 *   random rows. For the deletions feed it also holds tombstones (ensureTombstones).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from '@pda/projections/testing';
import { openCompanyWriter, openControlWriter } from '@pda/projections/write';
import { type ListFixture, listFixture } from '../../shared/api-fixture.ts';

export interface SinceFixture {
  readonly clustered: ListFixture;
  readonly shuffled: ListFixture;
  readonly shuffleSeconds: number;
}

/** Change time of the shuffled copy's oldest row (µs); the others follow 1 ms apart. */
export const SHUFFLED_BASE_US = Date.UTC(2026, 0, 1) * 1000;

export function sinceFixture(root: string, sites: number): SinceFixture {
  const clustered = listFixture(root, sites);
  const dataDir = join(root, `since-${sites}-${clustered.seed}`);
  const marker = join(dataDir, 'fixture.json');
  if (existsSync(marker)) {
    // Built by an older version: bring the copy's files to this code's schema, as listFixture does.
    openControlWriter(dataDir).close();
    openCompanyWriter(dataDir, clustered.companyId).close();
    return JSON.parse(readFileSync(marker, 'utf8')) as SinceFixture;
  }

  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(join(dataDir, 'companies'), { recursive: true });
  const started = performance.now();
  const file = `companies/${clustered.companyId}.sqlite`;
  for (const name of ['control.sqlite', file]) {
    const wal = join(clustered.dataDir, `${name}-wal`);
    if (existsSync(wal) && statSync(wal).size > 0) throw new Error(`${wal} is not checkpointed`);
    copyFileSync(join(clustered.dataDir, name), join(dataDir, name));
  }
  const db = openCompanyWriter(dataDir, clustered.companyId);
  try {
    const rowids = db.prepare('SELECT rowid FROM sites ORDER BY rowid').pluck().all() as number[];
    const random = seededRandom(0x5eed);
    for (let i = rowids.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [rowids[i], rowids[j]] = [rowids[j]!, rowids[i]!];
    }
    const update = db.prepare('UPDATE sites SET _changed_us = ? WHERE rowid = ?');
    db.transaction(() => {
      rowids.forEach((rowid, rank) => {
        update.run(SHUFFLED_BASE_US + rank * 1000, rowid);
      });
      db.prepare('UPDATE meta SET last_changed_us = ?').run(SHUFFLED_BASE_US + rowids.length * 1000);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  const fixture: SinceFixture = {
    clustered,
    shuffled: { ...clustered, dataDir },
    shuffleSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
  writeFileSync(marker, JSON.stringify(fixture, null, 2));
  return fixture;
}

/** Tombstones of each kind in the shuffled copy: `sites` (exported) and `site_contacts` (never asked for). */
export const TOMBSTONES_PER_TABLE = 100_000;

/**
 * Adds (once) TOMBSTONES_PER_TABLE tombstones of sites and of site contacts to the shuffled copy,
 * interleaved at random, 5 ms apart over the same span as the rows' change times; the file's
 * tombstone horizon is moved before them (the api answers 410 below it).
 */
export function ensureTombstones(fixture: SinceFixture): void {
  const db = openCompanyWriter(fixture.shuffled.dataDir, fixture.shuffled.companyId);
  try {
    if ((db.prepare('SELECT count(*) FROM tombstones').pluck().get() as number) > 0) return;
    const random = seededRandom(0x70b5);
    const hex = (digits: number) =>
      Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join('');
    const insert = db.prepare(
      'INSERT INTO tombstones (table_name, id, _src_lsn, _changed_us) VALUES (?, ?, 1, ?)',
    );
    const left = { sites: TOMBSTONES_PER_TABLE, site_contacts: TOMBSTONES_PER_TABLE };
    db.transaction(() => {
      for (let index = 0; left.sites + left.site_contacts > 0; index++) {
        const table = random() * (left.sites + left.site_contacts) < left.sites ? 'sites' : 'site_contacts';
        left[table] -= 1;
        const id = `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
        insert.run(table, id, SHUFFLED_BASE_US + index * 5000 + 1);
      }
      db.prepare('UPDATE meta SET tombstones_since_us = ?').run(SHUFFLED_BASE_US);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
