import { describe, expect, test } from 'vitest';
import {
  type ChangeKey,
  type ChangePosition,
  changedRowsSql,
  FEED_START,
  readChangedRows,
  readChanges,
  tombstonesSql,
} from '../src/read/changes.ts';
import type { ReadHandle } from '../src/read/read-handle.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';
import { randomFile, TABLES } from './random-changes.ts';

// The change feed's merge (readChanges) and its documents' range walk (readChangedRows), against a
// reference sorted in JS, on files changed at random: upserts, deletes, re-creates after a delete
// and TRUNCATEs (whose tombstones share one change time), read through any subset of the tables
// named in any order, from random positions (some between tables at one change time) with random
// limits; some rows and tombstones moved onto another change's time, so every tie of the order
// comes up. Each page's upserts of a table are that table's next rows in its change range, so one
// range walk per table returns their documents in page order.

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
