import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import type { Change } from '../src/model/change.ts';
import { type ChangeKey, compareChanges } from '../src/read/changes.ts';
import { openCompanyReader } from '../src/read/open-readers.ts';
import { ReadHandle } from '../src/read/read-handle.ts';
import type { PageTable } from '../src/read/tables.ts';
import { buildProjection } from '../src/testing/build-projection.ts';
import { makeDelete, makeTruncate, makeUpsert } from '../src/testing/make-change.ts';
import { sampleRow } from '../src/testing/sample-rows.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';

// A company file changed at random for the change feed's tests (changes-merge, changes-rows):
// upserts, deletes, re-creates after a delete and TRUNCATEs (whose tombstones share one change
// time); some rows and tombstones then moved onto another change's time, so every tie of the feed's
// order comes up. `all` is every change in feed order (the reference), `json` each row's document.

const COMPANY = '00000000-0000-4000-8000-0000000000c3';
export const TABLES: PageTable[] = ['consumables', 'equipment_categories', 'services', 'sites'];
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * `idsAgainstTables`: the ids of a later table sort before those of an earlier one (by default
 * they sort like their tables), so ordering a change time's rows by id alone is not the feed's order.
 */
export function randomFile(
  seed: number,
  idsAgainstTables = false,
): {
  handle: ReadHandle;
  all: ChangeKey[];
  json: Map<string, string>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'pda-changes-merge-'));
  dirs.push(dir);
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)]!;
  const tenant = { company_id: COMPANY };
  let lsn = 1;
  const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  const ids = new Map<PageTable, string[]>(
    TABLES.map((table, t) => {
      const base = (idsAgainstTables ? TABLES.length - 1 - t : t) * 1000;
      return [table, Array.from({ length: 25 }, (_, n) => uuid(base + n))];
    }),
  );
  const upsert = (table: PageTable, id: string) =>
    makeUpsert(table, sampleRow(table, { id, name: `n${lsn}`, ...tenant }), lsn++, { op: 'u' });
  buildProjection(dir, [makeUpsert('companies', sampleRow('companies', { id: COMPANY }), lsn++)]);
  for (let batch = 0; batch < 8; batch++) {
    const changes: Change[] = [];
    for (let n = 0; n < 25; n++) {
      const table = pick(TABLES);
      const draw = next();
      if (draw < 0.03) changes.push(makeTruncate(table, lsn++));
      else if (draw < 0.3) changes.push(makeDelete(table, { id: pick(ids.get(table)!) }, lsn++));
      else changes.push(upsert(table, pick(ids.get(table)!)));
    }
    buildProjection(dir, changes);
  }
  const handle = new ReadHandle(openCompanyReader(dir, COMPANY));
  // The writer gives every row its own change time; the reader must not rely on it. Some rows and
  // tombstones take the change time of another change (of any table), so ties between tables, and
  // between rows and tombstones, come up too.
  const writer = new Database(handle.db.name);
  const times = (writer.prepare('SELECT _changed_us FROM tombstones').pluck().all() as number[]).concat(
    ...TABLES.map((table) => writer.prepare(`SELECT _changed_us FROM ${table}`).pluck().all() as number[]),
  );
  for (const table of [...TABLES, 'tombstones']) {
    const update = writer.prepare(`UPDATE ${table} SET _changed_us = ? WHERE rowid = ?`);
    for (const rowid of writer.prepare(`SELECT rowid FROM ${table}`).pluck().all() as number[]) {
      if (next() < 0.3) update.run(pick(times), rowid);
    }
  }
  writer.close();
  const all: ChangeKey[] = [];
  const json = new Map<string, string>();
  for (const table of TABLES) {
    for (const row of handle.db.prepare(`SELECT id, _changed_us AS c, _json FROM ${table}`).all() as {
      id: string;
      c: number;
      _json: string;
    }[]) {
      all.push({ op: 'upsert', table, id: row.id, changedUs: row.c });
      json.set(`${table}/${row.id}`, row._json);
    }
  }
  for (const row of handle.db
    .prepare('SELECT table_name AS t, id, _changed_us AS c FROM tombstones')
    .all() as { t: PageTable; id: string; c: number }[]) {
    all.push({ op: 'delete', table: row.t, id: row.id, changedUs: row.c });
  }
  all.sort(compareChanges);
  return { handle, all, json };
}
