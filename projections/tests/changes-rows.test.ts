import { describe, expect, test, vi } from 'vitest';
import { type ChangeKey, type ChangePosition, FEED_START } from '../src/read/changes.ts';
import { changesUnionSql, readChangesWithRows } from '../src/read/changes-rows.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';
import { randomFile, TABLES } from './random-changes.ts';

// The change feed's page with its upserts' rows in one UNION ALL of the tables' change ranges
// (readChangesWithRows), against the reference of random files whose rows and tombstones share
// change times across tables: the rows of one change time put in table order, a page whose
// limit + 1 rows end inside one change time read by the per-table ranges instead; and EXPLAIN
// QUERY PLAN pins the union to a merge of index ranges, no sort.

const positionOf = (change: ChangeKey): ChangePosition => ({
  changedUs: change.changedUs,
  table: change.table,
  id: change.id,
});

describe('readChangesWithRows, randomized against a reference', () => {
  test.each([1, 2, 3, 4, 5, 6])('seed %i', (seed) => {
    // Ids sorting against their tables: the statement's (change time, id) order is not the feed's.
    const { handle, all, json } = randomFile(seed, true);
    const statements = vi.spyOn(handle, 'statement');
    try {
      const next = seededRandom(seed * 103);
      let unionOnly = 0;
      let byRanges = 0;
      for (let round = 0; round < 40; round++) {
        const tables = TABLES.filter(() => next() < 0.7);
        if (tables.length === 0) tables.push(TABLES[round % TABLES.length]!);
        if (next() < 0.5) tables.reverse();
        // Some tables read one more column than the others: the union pads the narrower arms.
        const columns = tables.map((table) =>
          table === 'sites' ? ['_json', 'id', 'name'] : ['_json', 'id'],
        );
        const expected = all.filter((change) => tables.includes(change.table));
        const start = Math.floor(next() * (expected.length + 1)) - 1;
        const limit = 1 + Math.floor(next() * 30);
        let after: ChangePosition = start < 0 ? FEED_START : positionOf(expected[start]!);
        let index = start + 1;
        if (start >= 0 && next() < 0.25) {
          after = { changedUs: expected[start]!.changedUs, table: '', id: '' };
          index = expected.findIndex((change) => change.changedUs >= after.changedUs);
        }
        for (;;) {
          statements.mockClear();
          const page = handle.snapshot(() => readChangesWithRows(handle, { tables, after, limit, columns }));
          const keys = statements.mock.calls.map(([key]) => key);
          if (keys.some((key) => key.startsWith('changes:rows:'))) byRanges++;
          else unionOnly++;
          expect(page.rows).toEqual(expected.slice(index, index + limit));
          expect(page.hasMore).toBe(index + limit < expected.length);
          expect(page.records).toHaveLength(page.rows.length);
          page.rows.forEach((row, at) => {
            const record = page.records[at];
            if (row.op === 'delete') {
              expect(record).toBeUndefined();
              return;
            }
            expect(record?.id).toBe(row.id);
            expect(record?._json).toBe(json.get(`${row.table}/${row.id}`));
            if (row.table === 'sites') expect(JSON.parse(record?._json as string).name).toBe(record?.name);
            else expect(record).not.toHaveProperty('name');
          });
          index += page.rows.length;
          if (!page.hasMore) break;
          after = positionOf(page.rows.at(-1)!);
        }
      }
      // Both ways were taken: one statement for the rows, and the per-table ranges.
      expect(unionOnly).toBeGreaterThan(0);
      expect(byRanges).toBeGreaterThan(0);
    } finally {
      handle.close();
    }
  });

  test('EXPLAIN QUERY PLAN: a merge of one index range per table, no sort; the LIMIT behind a CAST', () => {
    const { handle } = randomFile(9);
    try {
      const plan = (tables: readonly (typeof TABLES)[number][], columns: readonly (readonly string[])[]) => {
        const params: Record<string, unknown> = { limit: 51 };
        tables.forEach((_, index) => {
          params[`c${index}`] = 1;
          params[`i${index}`] = '';
        });
        return (
          handle.db.prepare(`EXPLAIN QUERY PLAN ${changesUnionSql(tables, columns)}`).all(params) as {
            detail: string;
          }[]
        ).map((row) => row.detail);
      };
      const three = plan(
        ['consumables', 'services', 'sites'],
        [
          ['_json', 'id'],
          ['_json', 'id'],
          ['_json', 'id', 'name'],
        ],
      );
      expect(three.filter((step) => step.startsWith('SEARCH'))).toEqual([
        'SEARCH consumables USING INDEX consumables_by_changed ((_changed_us,id)>(?,?))',
        'SEARCH services USING INDEX services_by_changed ((_changed_us,id)>(?,?))',
        'SEARCH sites USING INDEX sites_by_changed ((_changed_us,id)>(?,?))',
      ]);
      expect(three.filter((step) => step === 'MERGE (UNION ALL)')).toHaveLength(2);
      expect(three.some((step) => step.includes('TEMP B-TREE') || step.startsWith('SCAN'))).toBe(false);
      expect(plan(['sites'], [['_json', 'id']])).toEqual([
        'SEARCH sites USING INDEX sites_by_changed ((_changed_us,id)>(?,?))',
      ]);
      expect(changesUnionSql(['sites'], [['_json', 'id']])).toMatch(/LIMIT CAST\(@limit AS INTEGER\)$/);
    } finally {
      handle.close();
    }
  });
});
