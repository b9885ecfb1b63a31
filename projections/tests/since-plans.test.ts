import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Change } from '../src/model/change.ts';
import { type ChangePosition, FEED_START, readChanges } from '../src/read/changes.ts';
import { readChangesWithRows } from '../src/read/changes-rows.ts';
import {
  type Deletion,
  type DeletionPosition,
  type DeletionsRequest,
  deletionsSql,
  readDeletions,
  stretchEndSql,
} from '../src/read/deletions.ts';
import { openCompanyReader } from '../src/read/open-readers.ts';
import { type PageRequest, readPage, type SortKey } from '../src/read/page.ts';
import { changedPlanMax, sinceScanBudget } from '../src/read/page-budget.ts';
import { boundarySql, type PagePlan, pageSql } from '../src/read/page-sql.ts';
import { readPlannedPage } from '../src/read/planned-page.ts';
import { ReadHandle } from '../src/read/read-handle.ts';
import { chooseSincePlan } from '../src/read/since-plan.ts';
import type { PageTable, SortColumn } from '../src/read/tables.ts';
import { buildProjection } from '../src/testing/build-projection.ts';
import { makeDelete, makeUpsert } from '../src/testing/make-change.ts';
import { sampleRow } from '../src/testing/sample-rows.ts';
import { seededRandom } from '../src/testing/seeded-random.ts';

// Pages with a since (projections/README.md, "Pages with a since"): the plan is chosen from the
// size of the answer and pinned with INDEXED BY; whichever runs, the rows are the same. A file of
// random sites (ties on every sort column, a third of them updated later so change times do not
// follow the insert order) and tombstones, read against a reference computed in JS.

const COMPANY = '00000000-0000-4000-8000-0000000000c1';
const SITES = 1500;

interface SiteKeys {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly _changed_us: number;
}

let dir: string;
let handle: ReadHandle;
let sites: SiteKeys[];
/** Every site change time, ascending (all distinct: the writer's +1 rule). */
let times: number[];
let tombstones: Deletion[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pda-since-'));
  const next = seededRandom(23);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const hex = (digits: number) =>
    Array.from({ length: digits }, () => pick('0123456789abcdef'.split(''))).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
  const at = (minute: number) => `2026-01-${String(1 + (minute % 28)).padStart(2, '0')}T12:00:00.000000Z`;
  const names = ['a', 'b', 'c', 'd', 'e', 'f'].flatMap((x) =>
    ['a', 'b', 'c', 'd', 'e', 'f'].map((y) => x + y),
  );
  const tenant = { company_id: COMPANY };
  let lsn = 1;
  const ids = Array.from({ length: SITES }, uuid);
  const site = (id: string) =>
    makeUpsert(
      'sites',
      sampleRow('sites', {
        id,
        name: pick(names),
        created_at: at(Math.floor(next() * 100)),
        updated_at: at(Math.floor(next() * 30)),
        ...tenant,
      }),
      lsn++,
    );
  const first: Change[] = [makeUpsert('companies', sampleRow('companies', { id: COMPANY }), lsn++)];
  first.push(...ids.map(site));
  for (let n = 0; n < 60; n++) {
    first.push(makeUpsert('services', sampleRow('services', { id: uuid(), ...tenant }), lsn++));
  }
  buildProjection(dir, first, { clockUs: () => 1_000_000 });
  // Later batches: a third of the sites change again (random order), some sites and services go.
  const later: Change[] = ids.filter(() => next() < 1 / 3).map(site);
  buildProjection(dir, later, { clockUs: () => 1_000_000 });
  const db = openCompanyReader(dir, COMPANY);
  const services = db.prepare('SELECT id FROM services').pluck().all() as string[];
  db.close();
  const deletes: Change[] = [];
  for (const id of ids.slice(0, 200)) deletes.push(makeDelete('sites', { id }, lsn++));
  for (const id of services.slice(0, 40)) deletes.push(makeDelete('services', { id }, lsn++));
  buildProjection(dir, deletes, { clockUs: () => 1_000_000 });

  handle = new ReadHandle(openCompanyReader(dir, COMPANY));
  sites = handle.db
    .prepare('SELECT id, name, created_at, updated_at, _changed_us FROM sites')
    .all() as SiteKeys[];
  times = sites.map((row) => row._changed_us).sort((a, b) => a - b);
  tombstones = (
    handle.db.prepare('SELECT table_name AS "table", id, _changed_us AS changedUs FROM tombstones').all() as {
      table: PageTable;
      id: string;
      changedUs: number;
    }[]
  ).map((row) => ({ table: row.table, id: row.id, changedUs: row.changedUs }));
});

afterAll(() => {
  handle.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The since that matches exactly `count` sites. */
const sinceMatching = (count: number) => (count === 0 ? times.at(-1)! + 1 : times[times.length - count]!);

const key = (column: SortColumn, descending = false): SortKey => ({ column, descending });
const SORTS: readonly (readonly SortKey[])[] = [
  [key('id')],
  [key('id', true)],
  ...(['name', 'created_at', 'updated_at'] as const).flatMap((column) => [
    [key(column), key('id')],
    [key(column, true), key('id', true)],
  ]),
  [key('name', true), key('id')],
  [key('created_at'), key('name', true), key('id')],
];
const label = (sort: readonly SortKey[]) =>
  sort.map((entry) => `${entry.descending ? '-' : ''}${entry.column}`).join(',');

function compare(sort: readonly SortKey[], a: Record<string, unknown>, b: Record<string, unknown>): number {
  for (const { column, descending } of sort) {
    const x = String(a[column]);
    const y = String(b[column]);
    if (x !== y) return (x < y ? -1 : 1) * (descending ? -1 : 1);
  }
  return 0;
}

/** The page filtered and sorted in JS. */
function reference(request: PageRequest): { ids: string[]; hasMore: boolean } {
  const { sort, position, limit } = request;
  const at = position && Object.fromEntries(sort.map((entry, index) => [entry.column, position[index]]));
  let rows = sites
    .filter((row) => row._changed_us >= (request.changedSinceUs ?? 0))
    .sort((a, b) => compare(sort, a as never, b as never));
  if (request.direction === 'after') {
    if (at) rows = rows.filter((row) => compare(sort, row as never, at) > 0);
    return { ids: rows.slice(0, limit).map((row) => row.id), hasMore: rows.length > limit };
  }
  if (at) rows = rows.filter((row) => compare(sort, row as never, at) < 0);
  return { ids: rows.slice(-limit).map((row) => row.id), hasMore: rows.length > limit };
}

const PLANS: readonly PagePlan[] = ['walk-since', 'changed'];

/** A page's rows as the reference has them: with a budget that cannot bind (a whole file). */
function expectSameAsReference(request: PageRequest): void {
  request = { ...request, scanBudget: SITES };
  const expected = reference(request);
  const columns = ['_json', 'id', ...request.sort.map((entry) => entry.column)];
  const unique = [...new Set(columns)];
  for (const plan of PLANS) {
    const page = readPlannedPage(handle, 'sites', request, unique, plan);
    expect({ plan, ids: page.rows.map((row) => row.id), hasMore: page.hasMore }).toEqual({
      plan,
      ...expected,
    });
  }
  const page = readPage(handle, 'sites', request);
  expect({ plan: 'chosen', ids: page.rows.map((row) => row.id), hasMore: page.hasMore }).toEqual({
    plan: 'chosen',
    ...expected,
  });
}

describe('every plan returns the reference rows', () => {
  test('random sorts, positions, directions, limits and sinces', () => {
    const next = seededRandom(7);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
    for (let n = 0; n < 400; n++) {
      const sort = pick(SORTS);
      const row = pick(sites);
      const since = pick([
        0,
        times[0]!,
        times.at(-1)!,
        times.at(-1)! + 1,
        pick(times),
        pick(times) + 1,
        pick(times) - 1,
      ]);
      const request: PageRequest = {
        sort,
        limit: 1 + Math.floor(next() * 25),
        direction: next() < 0.5 ? 'after' : 'before',
        position: next() < 0.7 ? sort.map((entry) => String(row[entry.column])) : undefined,
        changedSinceUs: since,
      };
      expectSameAsReference(request);
    }
  });

  test('a since equal to a change time includes that row; past the newest, none; at the oldest, all', () => {
    for (const sort of SORTS) {
      for (const direction of ['after', 'before'] as const) {
        const exact = sites[17]!;
        const one = { sort, limit: SITES, direction, changedSinceUs: exact._changed_us } as const;
        expect(reference(one).ids).toContain(exact.id);
        expectSameAsReference(one);
        expectSameAsReference({ ...one, changedSinceUs: times.at(-1)! + 1 });
        expectSameAsReference({ ...one, changedSinceUs: times[0]! });
        expectSameAsReference({ ...one, limit: 10, changedSinceUs: times.at(-1)! });
      }
    }
  });
});

describe('the plan follows the size of the answer', () => {
  const LIMIT = 10;

  test('the thresholds fit in the file (else the cases below test nothing)', () => {
    expect(changedPlanMax(LIMIT, false)).toBe(432);
    expect(changedPlanMax(LIMIT, false) + 1).toBeLessThan(times.length);
    expect(changedPlanMax(LIMIT, true)).toBe(sinceScanBudget(LIMIT));
    expect(sinceScanBudget(LIMIT)).toBe(64 * 11 + 1024);
  });

  test.each(SORTS.map((sort) => [label(sort), sort] as const))('sort %s', (_, sort) => {
    const max = changedPlanMax(LIMIT, sort[0]!.column === 'id');
    const cases: [number, PagePlan][] =
      sort[0]!.column === 'id'
        ? // The id budget is larger than this file: only "every row" walks.
          [
            [0, 'changed'],
            [1, 'changed'],
            [times.length - 1, 'changed'],
            [times.length, 'walk-since'],
          ]
        : [
            [0, 'changed'],
            [1, 'changed'],
            [max - 1, 'changed'],
            [max, 'walk-since'],
            [max + 1, 'walk-since'],
            [times.length, 'walk-since'],
          ];
    for (const [count, plan] of cases) {
      const since = sinceMatching(count);
      expect({ count, plan: chooseSincePlan(handle, 'sites', sort, LIMIT, since) }).toEqual({ count, plan });
      for (const direction of ['after', 'before'] as const) {
        const request = { sort, limit: LIMIT, direction, changedSinceUs: since };
        expectSameAsReference(request);
        // and from a position in the middle of the answer
        const middle = reference({ ...request, limit: Math.ceil(count / 2) || 1 }).ids.at(-1);
        const row = sites.find((site) => site.id === middle) ?? sites[0]!;
        expectSameAsReference({ ...request, position: sort.map((entry) => String(row[entry.column])) });
      }
    }
  });
});

describe('a since page passes at most its budget of index entries', () => {
  /**
   * Entries of the sort's index after `from` (exclusive) up to `to` (inclusive) in the direction
   * of travel. Positions of this file always end with the id of an existing row: its rank tells.
   */
  function entriesBetween(
    sort: readonly SortKey[],
    backward: boolean,
    from: readonly string[] | undefined,
    to: readonly string[],
  ): number {
    const ranks = rankBySort(sort);
    const rank = (values: readonly string[] | undefined, start: number) =>
      values === undefined ? start : ranks.get(values.at(-1)!)!;
    return backward ? rank(from, sites.length) - rank(to, 0) : rank(to, 0) - rank(from, -1);
  }

  const rankCache = new Map<readonly SortKey[], Map<string, number>>();
  function rankBySort(sort: readonly SortKey[]): Map<string, number> {
    let ranks = rankCache.get(sort);
    if (!ranks) {
      const ordered = [...sites].sort((a, b) => compare(sort, a as never, b as never));
      ranks = new Map(ordered.map((row, index) => [row.id, index]));
      rankCache.set(sort, ranks);
    }
    return ranks;
  }

  /** Follows the pages as a partner follows links.next (or links.prev) until none is left. */
  function walk(request: PageRequest): { ids: string[]; pages: number; short: number } {
    const backward = request.direction === 'before';
    const ids: string[] = [];
    let position = request.position;
    let pages = 0;
    let short = 0;
    for (;;) {
      const page = readPage(handle, 'sites', { ...request, position });
      const plan = chooseSincePlan(handle, 'sites', request.sort, request.limit, request.changedSinceUs!);
      pages++;
      expect(page.rows.length).toBeLessThanOrEqual(request.limit);
      const rows = backward ? [...page.rows].reverse() : page.rows;
      const last = rows.at(-1);
      const end =
        page.reached ?? (last ? request.sort.map((entry) => String(last[entry.column])) : undefined);
      // `changed` is bounded by the rows it gathers instead (changedPlanMax), and never stops short.
      if (end && plan === 'walk-since') {
        expect(entriesBetween(request.sort, backward, position, end)).toBeLessThanOrEqual(
          request.scanBudget!,
        );
      }
      if (plan === 'changed') expect(page.reached).toBeUndefined();
      if (page.reached) {
        expect(page.hasMore).toBe(true);
        short++;
      }
      for (const row of rows) ids.push(row.id);
      if (!page.hasMore) break;
      position = end;
      expect(pages).toBeLessThan(SITES);
    }
    return { ids: backward ? ids.reverse() : ids, pages, short };
  }

  test('walked with small budgets, every sort, both directions: exactly the answer, in order', () => {
    const next = seededRandom(31);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
    let shortPages = 0;
    for (let n = 0; n < 80; n++) {
      const sort = pick(SORTS);
      const count = pick([1, 5, 40, 200, 600, times.length]);
      const request: PageRequest = {
        sort,
        limit: 1 + Math.floor(next() * 20),
        direction: next() < 0.5 ? 'after' : 'before',
        changedSinceUs: sinceMatching(count),
        scanBudget: pick([1, 3, 20, 50, 300]),
      };
      const expected = reference({ ...request, limit: SITES }).ids;
      const walked = walk(request);
      expect({ n, ids: walked.ids }).toEqual({ n, ids: expected });
      shortPages += walked.short;
    }
    // The budget bound: without short pages the cases above would not test it.
    expect(shortPages).toBeGreaterThan(100);
  });

  test('a page whose budget runs out before any match is empty, has more, and says where it stopped', () => {
    const sort = [key('name'), key('id')];
    // One matching row: the newest change; the walk from the start of name order passes the others.
    const newest = sites.find((row) => row._changed_us === times.at(-1))!;
    const before = sites.filter((row) => compare(sort, row as never, newest as never) < 0).length;
    expect(before).toBeGreaterThan(100);
    const request: PageRequest = {
      sort,
      limit: 5,
      direction: 'after',
      changedSinceUs: times.at(-1)!,
      scanBudget: 50,
    };
    const page = readPlannedPage(handle, 'sites', request, ['id', 'name'], 'walk-since');
    expect(page.rows).toEqual([]);
    expect(page.hasMore).toBe(true);
    const fiftieth = [...sites].sort((a, b) => compare(sort, a as never, b as never))[49]!;
    expect(page.reached).toEqual([fiftieth.name, fiftieth.id]);
  });

  test('the default budget: 64 entries per row wanted plus 1,024; the changed plan up to a quarter of it (all of it by id)', () => {
    expect(sinceScanBudget(50)).toBe(64 * 51 + 1024);
    expect(sinceScanBudget(200)).toBe(64 * 201 + 1024);
    expect(changedPlanMax(200, false)).toBe(Math.ceil(sinceScanBudget(200) / 4));
    expect(changedPlanMax(200, true)).toBe(sinceScanBudget(200));
  });
});

const sortIndexName = (column: string) => (column === 'id' ? 'sites_by_id_changed' : `sites_by_${column}`);

/** EXPLAIN QUERY PLAN of a page statement, one line per step. */
function planOf(
  table: PageTable,
  sort: readonly SortKey[],
  plan: PagePlan,
  backward: boolean,
  hasPosition: boolean,
  hasBound = false,
) {
  const columns = [...new Set(['_json', 'id', ...sort.map((entry) => entry.column)])];
  const sql = pageSql({ table, columns, sort, backward, hasPosition, hasBound }, plan);
  const params: Record<string, unknown> = { limit: 51 };
  if (plan !== 'walk') params.since = 0;
  sort.forEach((_, index) => {
    if (hasPosition) params[`p${index}`] = 'x';
    if (hasBound) params[`b${index}`] = 'y';
  });
  return (handle.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
    (row) => row.detail,
  );
}

/** What SQLite must do for a walk of the sort index (the walk plans' first step and sort). */
function walkSteps(table: string, sort: readonly SortKey[], backward: boolean, hasPosition: boolean) {
  const first = sort[0]!;
  const index = first.column === 'id' ? `${table}_by_id_changed` : `${table}_by_${first.column}`;
  const op = first.descending !== backward ? '<' : '>';
  const onIndex = sort.length === 1 || (sort.length === 2 && sort[1]!.descending === first.descending);
  const range =
    sort.length === 1
      ? `(id${op}?)`
      : onIndex
        ? `((${first.column},id)${op}(?,?))`
        : `(${first.column}${op}?)`;
  const scan = hasPosition
    ? `SEARCH ${table} USING INDEX ${index} ${range}`
    : `SCAN ${table} USING INDEX ${index}`;
  const rest = sort.length - 1;
  const sorter = onIndex
    ? []
    : [`USE TEMP B-TREE FOR LAST ${rest === 1 ? 'TERM' : `${rest} TERMS`} OF ORDER BY`];
  return { scan, sorter };
}

function expectedPlan(
  table: string,
  sort: readonly SortKey[],
  plan: PagePlan,
  backward: boolean,
  hasPosition: boolean,
): string[] {
  if (plan === 'changed') {
    const covering = sort.length === 1 ? 'COVERING ' : '';
    return [
      'CO-ROUTINE w',
      `SEARCH ${table} USING ${covering}INDEX ${table}_by_changed (_changed_us>?)`,
      'USE TEMP B-TREE FOR ORDER BY',
      'SCAN w',
      'SEARCH s USING INTEGER PRIMARY KEY (rowid=?)',
    ];
  }
  const { scan, sorter } = walkSteps(table, sort, backward, hasPosition);
  return [scan, ...sorter];
}

describe('EXPLAIN QUERY PLAN pins the plans', () => {
  const shapes = SORTS.flatMap((sort) =>
    [false, true].flatMap((backward) =>
      [false, true].map((hasPosition) => ({ sort, backward, hasPosition })),
    ),
  );

  test.each(shapes.map((shape) => [label(shape.sort), shape.backward, shape.hasPosition, shape] as const))(
    'sites sort %s backward=%s position=%s: small, middle and large answers',
    (_, _backward, _position, { sort, backward, hasPosition }) => {
      const counts = [5, changedPlanMax(50, sort[0]!.column === 'id'), times.length];
      for (const count of counts) {
        const plan = chooseSincePlan(handle, 'sites', sort, 50, sinceMatching(Math.min(count, times.length)));
        expect(planOf('sites', sort, plan, backward, hasPosition)).toEqual(
          expectedPlan('sites', sort, plan, backward, hasPosition),
        );
      }
    },
  );

  test.each(SORTS.flatMap((sort) => [false, true].map((backward) => [label(sort), backward, sort] as const)))(
    'a stretch of a budgeted walk, sort %s backward=%s: a range of the sort index between two keys, rows read for matches only',
    (_, backward, sort) => {
      const first = sort[0]!;
      const onIndex = sort.length === 1 || (sort.length === 2 && sort[1]!.descending === first.descending);
      const range =
        sort.length === 1
          ? '(id>? AND id<?)'
          : onIndex
            ? `((${first.column},id)>(?,?) AND (${first.column},id)<(?,?))`
            : `(${first.column}>? AND ${first.column}<?)`;
      const rest = sort.length - 1;
      const sorter = onIndex
        ? []
        : [`USE TEMP B-TREE FOR LAST ${rest === 1 ? 'TERM' : `${rest} TERMS`} OF ORDER BY`];
      expect(planOf('sites', sort, 'walk-since', backward, true, true)).toEqual([
        `SEARCH sites USING INDEX ${sortIndexName(first.column)} ${range}`,
        ...sorter,
      ]);
      // The change time is checked in the index entry; the row is sought only for an entry that
      // passes (SQLite's deferred seek).
      const columns = [...new Set(['_json', 'id', ...sort.map((entry) => entry.column)])];
      const shape = { table: 'sites', columns, sort, backward, hasPosition: true, hasBound: true } as const;
      const params: Record<string, unknown> = { limit: 51, since: 0 };
      sort.forEach((_, index) => {
        params[`p${index}`] = 'x';
        params[`b${index}`] = 'y';
      });
      const opcodes = (
        handle.db.prepare(`EXPLAIN ${pageSql(shape, 'walk-since')}`).all(params) as { opcode: string }[]
      ).map((row) => row.opcode);
      expect(opcodes).toContain('DeferredSeek');
      // Where the stretch ends: index steps only when the order is the index's.
      const boundaryParams: Record<string, unknown> = { skip: 10 };
      sort.forEach((_, index) => {
        boundaryParams[`p${index}`] = 'x';
      });
      const boundary = (
        handle.db.prepare(`EXPLAIN QUERY PLAN ${boundarySql(shape)}`).all(boundaryParams) as {
          detail: string;
        }[]
      ).map((row) => row.detail);
      const op = first.descending !== backward ? '<' : '>';
      const start =
        sort.length === 1
          ? `(id${op}?)`
          : onIndex
            ? `((${first.column},id)${op}(?,?))`
            : `(${first.column}${op}?)`;
      const covering = sort.length <= 2 ? 'COVERING ' : '';
      expect(boundary).toEqual([
        `SEARCH sites USING ${covering}INDEX ${sortIndexName(first.column)} ${start}`,
        ...sorter,
      ]);
    },
  );

  test.each(['services', 'equipment_categories', 'equipment', 'consumables'] as const)(
    '%s: each plan on its own indexes',
    (table) => {
      for (const sort of SORTS) {
        for (const plan of PLANS) {
          expect(planOf(table, sort, plan, false, true)).toEqual(
            expectedPlan(table, sort, plan, false, true),
          );
        }
      }
    },
  );
});

describe('deletions', () => {
  const TABLES: readonly PageTable[] = ['sites', 'services'];
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const feedOrder = (a: Deletion, b: Deletion) =>
    a.changedUs - b.changedUs || text(a.table, b.table) || text(a.id, b.id);

  function deletionsReference(request: DeletionsRequest) {
    const { position } = request;
    let rows = tombstones
      .filter((row) => row.changedUs >= request.sinceUs && request.tables.includes(row.table))
      .sort(feedOrder);
    const at = position && {
      changedUs: position.changedUs,
      table: position.table as PageTable,
      id: position.id,
    };
    if (request.direction === 'after') {
      if (at) rows = rows.filter((row) => feedOrder(row, at) > 0);
      return { rows: rows.slice(0, request.limit), hasMore: rows.length > request.limit };
    }
    if (at) rows = rows.filter((row) => feedOrder(row, at) < 0);
    return { rows: rows.slice(-request.limit), hasMore: rows.length > request.limit };
  }

  test('pages equal the reference', () => {
    const next = seededRandom(11);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
    const changed = tombstones.map((row) => row.changedUs);
    for (let n = 0; n < 300; n++) {
      const at = pick(tombstones);
      const request: DeletionsRequest = {
        tables: pick([['sites'], ['services'], TABLES]),
        sinceUs: pick([0, pick(changed), pick(changed) + 1, Math.max(...changed) + 1]),
        limit: 1 + Math.floor(next() * 30),
        direction: next() < 0.5 ? 'after' : 'before',
        position: next() < 0.6 ? { changedUs: at.changedUs, table: at.table, id: at.id } : undefined,
      };
      // A cursor's position comes from a page of the same since.
      if (request.position && request.position.changedUs < request.sinceUs) continue;
      expect(readDeletions(handle, request)).toEqual(deletionsReference(request));
    }
  });

  test('EXPLAIN QUERY PLAN: a range of the change-time index, from the since or the position, to a stretch end', () => {
    const plans: string[] = [];
    const explain = (sql: string, params: Record<string, unknown>) =>
      (handle.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[])
        .map((row) => row.detail)
        .join(' | ');
    for (const backward of [false, true]) {
      for (const hasPosition of [false, true]) {
        const position = hasPosition ? { pc: 1, pt: 'sites', pi: 'x' } : {};
        for (const hasBound of [false, true]) {
          const params = { since: 0, limit: 6, t0: 'sites', t1: 'services', ...position };
          if (hasBound) Object.assign(params, { bc: 2, bt: 'sites', bi: 'y' });
          plans.push(
            `${backward ? 'before' : 'after'}${hasPosition ? ' from a position' : ''}${hasBound ? ' to a bound' : ''}: ${explain(deletionsSql(2, backward, hasPosition, hasBound), params)}`,
          );
        }
        plans.push(
          `${backward ? 'before' : 'after'}${hasPosition ? ' from a position' : ''}, stretch end: ${explain(stretchEndSql({ backward, hasPosition, since: true }), { since: 0, skip: 5, ...position })}`,
        );
      }
    }
    plans.push(
      `the change feed's, stretch end: ${explain(stretchEndSql({ backward: false, hasPosition: true, since: false }), { skip: 5, pc: 1, pt: 'sites', pi: 'x' })}`,
    );
    const index = 'SEARCH tombstones USING COVERING INDEX tombstones_by_changed';
    expect(plans).toEqual([
      `after: ${index} (_changed_us>?)`,
      `after to a bound: ${index} (_changed_us>? AND (_changed_us,table_name,id)<(?,?,?))`,
      `after, stretch end: ${index} (_changed_us>?)`,
      `after from a position: ${index} ((_changed_us,table_name,id)>(?,?,?))`,
      `after from a position to a bound: ${index} ((_changed_us,table_name,id)>(?,?,?) AND (_changed_us,table_name,id)<(?,?,?))`,
      `after from a position, stretch end: ${index} ((_changed_us,table_name,id)>(?,?,?))`,
      `before: ${index} (_changed_us>?)`,
      `before to a bound: ${index} ((_changed_us,table_name,id)>(?,?,?))`,
      `before, stretch end: ${index} (_changed_us>?)`,
      `before from a position: ${index} (_changed_us>? AND (_changed_us,table_name,id)<(?,?,?))`,
      `before from a position to a bound: ${index} ((_changed_us,table_name,id)>(?,?,?) AND (_changed_us,table_name,id)<(?,?,?))`,
      `before from a position, stretch end: ${index} (_changed_us>? AND (_changed_us,table_name,id)<(?,?,?))`,
      `the change feed's, stretch end: ${index} ((_changed_us,table_name,id)>(?,?,?))`,
    ]);
  });

  test('tombstones of other tables pass at most the budget: a short page says where it stopped, and walking on gives the rest', () => {
    // Asked for services only: the 200 sites tombstones come first in change order (deleted first).
    const request: DeletionsRequest = {
      tables: ['services'],
      sinceUs: 0,
      limit: 5,
      direction: 'after',
      scanBudget: 30,
    };
    const first = readDeletions(handle, request);
    expect(first.rows).toEqual([]);
    expect(first.hasMore).toBe(true);
    const ordered = [...tombstones].sort(feedOrder);
    const thirtieth = ordered[29]!;
    expect(first.reached).toEqual({
      changedUs: thirtieth.changedUs,
      table: thirtieth.table,
      id: thirtieth.id,
    });
    for (const direction of ['after', 'before'] as const) {
      for (const scanBudget of [1, 7, 30]) {
        const walked: Deletion[] = [];
        let position: DeletionPosition | undefined;
        for (let pages = 0; ; pages++) {
          expect(pages).toBeLessThan(tombstones.length + 2);
          const page = readDeletions(handle, { ...request, direction, scanBudget, position });
          walked.push(...(direction === 'after' ? page.rows : [...page.rows].reverse()));
          if (!page.hasMore) break;
          const end = direction === 'after' ? page.rows.at(-1) : page.rows[0];
          position = page.reached ?? (end && { changedUs: end.changedUs, table: end.table, id: end.id });
        }
        const expected = deletionsReference({ ...request, limit: tombstones.length }).rows;
        expect(direction === 'after' ? walked : walked.reverse()).toEqual(expected);
      }
    }
  });
});

describe('the change feed passes at most a budget of tombstones of other tables', () => {
  /** Follows a feed of `tables` to its end with a budget: the next page starts after `reached` or the last row. */
  function walkFeed(tables: readonly PageTable[], limit: number, scanBudget: number, withRows: boolean) {
    const seen: string[] = [];
    let after: ChangePosition = FEED_START;
    let short = 0;
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(tombstones.length + SITES);
      const request = { tables, after, limit, scanBudget };
      const page = withRows
        ? readChangesWithRows(handle, { ...request, columns: tables.map(() => ['id']) })
        : readChanges(handle, request);
      expect(page.rows.length).toBeLessThanOrEqual(limit);
      for (const row of page.rows) seen.push(`${row.op} ${row.table} ${row.id} ${row.changedUs}`);
      if (page.reached) short++;
      if (!page.hasMore) break;
      const last = page.rows.at(-1);
      after = page.reached ?? (last ? { changedUs: last.changedUs, table: last.table, id: last.id } : after);
    }
    return { seen, short };
  }

  test.each([false, true])(
    'walked with small budgets (documents read with the keys: %s): the same changes, in order',
    (withRows) => {
      for (const tables of [['services'], ['services', 'sites']] as PageTable[][]) {
        const expected = walkFeed(tables, 7, 1_000_000, withRows);
        expect(expected.short).toBe(0);
        let short = 0;
        for (const scanBudget of [1, 5, 30]) {
          const walked = walkFeed(tables, 7, scanBudget, withRows);
          expect(walked.seen).toEqual(expected.seen);
          short += walked.short;
        }
        // Services asked alone pass the 200 sites' tombstones: short pages (else this tests nothing).
        if (tables.length === 1) expect(short).toBeGreaterThan(3);
      }
    },
  );

  test('no upsert is served ahead of a tombstone the budget has not reached yet', () => {
    // Sites deleted, then a service deleted, then services created: the feed of services is
    // [delete s0, upsert s1, upsert s2], behind 40 site tombstones.
    const feedDir = mkdtempSync(join(tmpdir(), 'pda-feed-budget-'));
    try {
      let lsn = 1;
      const tenant = { company_id: COMPANY };
      const siteIds = Array.from(
        { length: 40 },
        (_, n) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      );
      const service = (n: number) => `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`;
      buildProjection(
        feedDir,
        [
          makeUpsert('companies', sampleRow('companies', { id: COMPANY }), lsn++),
          ...siteIds.map((id) => makeUpsert('sites', sampleRow('sites', { id, ...tenant }), lsn++)),
          makeUpsert('services', sampleRow('services', { id: service(0), ...tenant }), lsn++),
        ],
        { clockUs: () => 1_000_000 },
      );
      buildProjection(
        feedDir,
        [
          ...siteIds.map((id) => makeDelete('sites', { id }, lsn++)),
          makeDelete('services', { id: service(0) }, lsn++),
          ...[1, 2].map((n) =>
            makeUpsert('services', sampleRow('services', { id: service(n), ...tenant }), lsn++),
          ),
        ],
        { clockUs: () => 1_000_000 },
      );
      const feed = new ReadHandle(openCompanyReader(feedDir, COMPANY));
      try {
        for (const withRows of [false, true]) {
          const seen: string[] = [];
          let after: ChangePosition = FEED_START;
          for (let pages = 0; pages < 100; pages++) {
            const request = { tables: ['services'] as PageTable[], after, limit: 2, scanBudget: 4 };
            const page = withRows
              ? readChangesWithRows(feed, { ...request, columns: [['id']] })
              : readChanges(feed, request);
            for (const row of page.rows) seen.push(`${row.op} ${row.id}`);
            if (!page.hasMore) break;
            const last = page.rows.at(-1);
            after =
              page.reached ?? (last ? { changedUs: last.changedUs, table: last.table, id: last.id } : after);
          }
          expect({ withRows, seen }).toEqual({
            withRows,
            seen: [`delete ${service(0)}`, `upsert ${service(1)}`, `upsert ${service(2)}`],
          });
        }
      } finally {
        feed.close();
      }
    } finally {
      rmSync(feedDir, { recursive: true, force: true });
    }
  });
});
