import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, test } from 'vitest';
import type { Change } from '../src/model/change.ts';
import {
  type ChangeKey,
  type ChangePosition,
  changedRowsSql,
  compareChanges,
  FEED_START,
  readChangedRows,
  readChanges,
  tombstonesSql,
} from '../src/read/changes.ts';
import { openCompanyReader } from '../src/read/open-readers.ts';
import { ReadHandle } from '../src/read/read-handle.ts';
import type { PageTable } from '../src/read/tables.ts';
import { buildProjection } from '../src/testing/build-projection.ts';
import { makeDelete, makeTruncate, makeUpsert } from '../src/testing/make-change.ts';
import { sampleRow } from '../src/testing/sample-rows.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';

// The change feed's merge (readChanges) and its documents' range walk (readChangedRows), against a
// reference sorted in JS, on files changed at random: upserts, deletes, re-creates after a delete
// and TRUNCATEs (whose tombstones share one change time), read through any subset of the tables
// named in any order, from random positions (some between tables at one change time) with random
// limits; some rows and tombstones moved onto another change's time, so every tie of the order
// comes up. Each page's upserts of a table are that table's next rows in its change range, so one
// range walk per table returns their documents in page order.

const COMPANY = '00000000-0000-4000-8000-0000000000c3';
const TABLES: PageTable[] = ['consumables', 'equipment_categories', 'services', 'sites'];
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function randomFile(seed: number): { handle: ReadHandle; all: ChangeKey[]; json: Map<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'pda-changes-merge-'));
  dirs.push(dir);
  const next = seededRandom(seed);
  const pick = <T>(values: readonly T[]) => values[Math.floor(next() * values.length)]!;
  const tenant = { company_id: COMPANY };
  let lsn = 1;
  const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  const ids = new Map<PageTable, string[]>(
    TABLES.map((table, t) => [table, Array.from({ length: 25 }, (_, n) => uuid(t * 1000 + n))]),
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

const positionOf = (change: ChangeKey): ChangePosition => ({
  changedUs: change.changedUs,
  table: change.table,
  id: change.id,
});

/** The page's upserts of each table, read as readChangedRows does, must be its documents in order. */
function expectDocuments(
  handle: ReadHandle,
  after: ChangePosition,
  rows: readonly ChangeKey[],
  json: ReadonlyMap<string, string>,
): void {
  for (const table of TABLES) {
    const upserts = rows.filter((row) => row.op === 'upsert' && row.table === table);
    if (upserts.length === 0) continue;
    const documents = readChangedRows(handle, table, after, upserts.length, ['_json', 'id']);
    expect(documents.map((row) => row.id)).toEqual(upserts.map((row) => row.id));
    expect(documents.map((row) => row._json)).toEqual(upserts.map((row) => json.get(`${table}/${row.id}`)));
  }
}

describe('readChanges merge and readChangedRows, randomized against a reference', () => {
  test.each([1, 2, 3, 4])('seed %i', (seed) => {
    const { handle, all, json } = randomFile(seed);
    try {
      // The file has what the merge must order: shared change times (a TRUNCATE's tombstones),
      // deletes, and a re-creation after a delete.
      const times = new Set(all.map((change) => change.changedUs));
      expect(times.size).toBeLessThan(all.length);
      expect(all.some((change) => change.op === 'delete')).toBe(true);
      const next = seededRandom(seed * 101);
      for (let round = 0; round < 40; round++) {
        const tables = TABLES.filter(() => next() < 0.7);
        if (tables.length === 0) tables.push(TABLES[round % TABLES.length]!);
        if (next() < 0.5) tables.reverse();
        const expected = all.filter((change) => tables.includes(change.table));
        const start = Math.floor(next() * (expected.length + 1)) - 1;
        const limit = 1 + Math.floor(next() * 30);
        let after: ChangePosition = start < 0 ? FEED_START : positionOf(expected[start]!);
        let index = start + 1;
        if (start >= 0 && next() < 0.25) {
          // Between tables at this change time: before every table ('') at it.
          after = { changedUs: expected[start]!.changedUs, table: '', id: '' };
          index = expected.findIndex((change) => change.changedUs >= after.changedUs);
        }
        // Walk to the end from here, page by page.
        for (;;) {
          const page = handle.snapshot(() => {
            const read = readChanges(handle, { tables, after, limit });
            expectDocuments(handle, after, read.rows, json);
            return read;
          });
          expect(page.rows).toEqual(expected.slice(index, index + limit));
          expect(page.hasMore).toBe(index + limit < expected.length);
          index += page.rows.length;
          if (!page.hasMore) break;
          after = positionOf(page.rows.at(-1)!);
        }
      }
    } finally {
      handle.close();
    }
  });

  test('limits are bound behind a CAST: a bare LIMIT parameter makes SQLite prepare the statement again on every bind', () => {
    for (const sql of [
      changedRowsSql('sites', true),
      changedRowsSql('sites', false, ['_json', 'id']),
      tombstonesSql(2),
    ]) {
      expect(sql).toMatch(/LIMIT CAST\(@limit AS INTEGER\)$/);
    }
  });
});
