import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Change } from '../src/model/change.ts';
import {
  type ChangeKey,
  type ChangePosition,
  changedRowsSql,
  compareChanges,
  FEED_START,
  readChanges,
  tombstonesSql,
} from '../src/read/changes.ts';
import { openCompanyReader } from '../src/read/open-readers.ts';
import { ReadHandle } from '../src/read/read-handle.ts';
import type { PageTable } from '../src/read/tables.ts';
import { buildProjection } from '../src/testing/build-projection.ts';
import { makeDelete, makeUpsert } from '../src/testing/make-change.ts';
import { sampleRow } from '../src/testing/sample-rows.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';

// The change feed's read (projections/src/read/changes.ts): per-table ranges of the change-time
// indexes and one of the tombstones, merged. Against a reference computed in JS over a file of
// sites, services and consumables changed in random order (some deleted, some deleted and
// re-created), every page after every position is the reference's; and EXPLAIN QUERY PLAN pins
// each statement to an index range: no scan, no sort, whatever the file's size.

const COMPANY = '00000000-0000-4000-8000-0000000000c2';
const TABLES: PageTable[] = ['consumables', 'services', 'sites'];

let dir: string;
let handle: ReadHandle;
let all: ChangeKey[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pda-changes-'));
  const next = seededRandom(7);
  const tenant = { company_id: COMPANY };
  let lsn = 1;
  const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
  const ids = new Map<PageTable, string[]>(
    TABLES.map((table, t) => [table, Array.from({ length: 60 }, (_, n) => uuid(t * 1000 + n))]),
  );
  const upsert = (table: PageTable, id: string) =>
    makeUpsert(table, sampleRow(table, { id, ...tenant }), lsn++, { op: 'u' });
  const first: Change[] = [makeUpsert('companies', sampleRow('companies', { id: COMPANY }), lsn++)];
  for (const table of TABLES) for (const id of ids.get(table)!) first.push(upsert(table, id));
  buildProjection(dir, first);
  for (let batch = 0; batch < 6; batch++) {
    const changes: Change[] = [];
    for (let n = 0; n < 30; n++) {
      const table = TABLES[Math.floor(next() * TABLES.length)]!;
      const id = ids.get(table)![Math.floor(next() * 60)]!;
      changes.push(next() < 0.3 ? makeDelete(table, { id }, lsn++) : upsert(table, id));
    }
    buildProjection(dir, changes);
  }
  handle = new ReadHandle(openCompanyReader(dir, COMPANY));
  all = [];
  for (const table of TABLES) {
    for (const row of handle.db.prepare(`SELECT id, _changed_us AS c FROM ${table}`).all() as {
      id: string;
      c: number;
    }[]) {
      all.push({ op: 'upsert', table, id: row.id, changedUs: row.c });
    }
  }
  for (const row of handle.db
    .prepare('SELECT table_name AS t, id, _changed_us AS c FROM tombstones')
    .all() as {
    t: PageTable;
    id: string;
    c: number;
  }[]) {
    all.push({ op: 'delete', table: row.t, id: row.id, changedUs: row.c });
  }
  all.sort(compareChanges);
});

afterAll(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const positionOf = (change: ChangeKey): ChangePosition => ({
  changedUs: change.changedUs,
  table: change.table,
  id: change.id,
});

describe('readChanges', () => {
  test('walks every change once, in (change time, table, id) order, for any limit', () => {
    expect(all.some((change) => change.op === 'delete')).toBe(true);
    for (const limit of [1, 7, 50, 1000]) {
      const seen: ChangeKey[] = [];
      let after = FEED_START;
      for (;;) {
        const page = readChanges(handle, { tables: TABLES, after, limit });
        seen.push(...page.rows);
        if (page.rows.length > 0) after = positionOf(page.rows.at(-1)!);
        if (!page.hasMore) break;
      }
      expect(seen).toEqual(all);
    }
  });

  test("after any position: the reference's next changes; a subset of tables only theirs", () => {
    for (let index = 0; index < all.length; index += 13) {
      const after = positionOf(all[index]!);
      expect(readChanges(handle, { tables: TABLES, after, limit: 5 }).rows).toEqual(
        all.slice(index + 1, index + 6),
      );
      const sites = all.slice(index + 1).filter((change) => change.table === 'sites');
      expect(readChanges(handle, { tables: ['sites'], after, limit: 3 }).rows).toEqual(sites.slice(0, 3));
    }
    // A position between tables at one change time ('' table: before all of them).
    const at = all[40]!;
    expect(
      readChanges(handle, { tables: TABLES, after: { changedUs: at.changedUs, table: '', id: '' }, limit: 2 })
        .rows,
    ).toEqual(all.slice(40, 42));
  });

  test('EXPLAIN QUERY PLAN: one index range per table and one of the tombstones, no sort', () => {
    const plan = (sql: string, params: Record<string, unknown>) =>
      (handle.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
        (row) => row.detail,
      );
    expect(plan(changedRowsSql('sites', true), { pc: 1, pi: '', limit: 51 })).toEqual([
      'SEARCH sites USING COVERING INDEX sites_by_changed ((_changed_us,id)>(?,?))',
    ]);
    expect(plan(changedRowsSql('services', false), { pc: 1, limit: 51 })).toEqual([
      'SEARCH services USING COVERING INDEX services_by_changed (_changed_us>?)',
    ]);
    // The documents of a page's upserts of one table (readChangedRows): the same range, each row looked up.
    expect(plan(changedRowsSql('sites', true, ['_json', 'id']), { pc: 1, pi: '', limit: 20 })).toEqual([
      'SEARCH sites USING INDEX sites_by_changed ((_changed_us,id)>(?,?))',
    ]);
    expect(plan(changedRowsSql('services', false, ['_json', 'id']), { pc: 1, limit: 20 })).toEqual([
      'SEARCH services USING INDEX services_by_changed (_changed_us>?)',
    ]);
    expect(plan(tombstonesSql(3), { pc: 1, pt: '', pi: '', limit: 51, t0: 'a', t1: 'b', t2: 'c' })).toEqual([
      'SEARCH tombstones USING COVERING INDEX tombstones_by_changed ((_changed_us,table_name,id)>(?,?,?))',
    ]);
    // One type is bound twice (readChanges): a single `IN (?)` would sort each change time's ids.
    expect(plan(tombstonesSql(2), { pc: 1, pt: '', pi: '', limit: 51, t0: 'sites', t1: 'sites' })).toEqual([
      'SEARCH tombstones USING COVERING INDEX tombstones_by_changed ((_changed_us,table_name,id)>(?,?,?))',
    ]);
    expect(
      plan(tombstonesSql(1), { pc: 1, pt: '', pi: '', limit: 51, t0: 'sites' }).some((step) =>
        step.startsWith('USE TEMP B-TREE'),
      ),
    ).toBe(true);
  });
});
