import { describe, expect, it } from 'vitest';
import { type Change, companyPartition, type UpsertChange } from '../src/model/index.ts';
import { listCompanyFiles } from '../src/model/paths.ts';
import { makeDelete, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { A, B, C, companyRows, controlRows, dump, fixedClock, id, tempDataDir } from './helpers.ts';

/**
 * A row moving between companies on company-keyed partitions (docs/scaling.md; plan-tenant.ts
 * isMovePairCreate and planKeyedDelete): the connector keys tenant events by (id, company_id), so the
 * UPDATE that moves a row arrives as a `d` keyed {id, OLD} on the old company's partition and a `c`
 * keyed {id, NEW} with every column on the new one, both at the UPDATE's position.
 */
const S1 = id(1);
const LONG = 'x'.repeat(6_000);

/** A site event as the partitioned connector keys it: {id, company_id}. */
function keyedSite(companyId: string, lsn: number, fields: Record<string, string> = {}, op: 'c' | 'u' = 'c') {
  const change = makeUpsert('sites', sampleRow('sites', { id: S1, company_id: companyId, ...fields }), lsn, {
    op,
  });
  return { ...change, key: { id: S1, company_id: companyId } } satisfies UpsertChange;
}
const keyedDelete = (companyId: string, lsn: number) =>
  makeDelete('sites', { id: S1, company_id: companyId }, lsn);

/** Row S1 created in A at 10 (key with company), then moved to B at 20 (with a long note). */
const CREATED = keyedSite(A, 10, { name: 'In A', notes: LONG });
const MOVE_D = keyedDelete(A, 20);
const MOVE_C = keyedSite(B, 20, { name: 'Moved to B', notes: LONG });

function open(): { dir: string; store: ProjectionStore } {
  const dir = tempDataDir();
  return { dir, store: ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(), nowMs: () => 1 }) };
}

/** The row is in B only, with the c's columns; A holds its tombstone at the move's position. */
function expectMoved(dir: string): void {
  expect(companyRows(dir, B, 'sites')).toMatchObject([
    { id: S1, name: 'Moved to B', notes: LONG, _src_lsn: 20 },
  ]);
  expect(companyRows(dir, A, 'sites')).toEqual([]);
  expect(companyRows(dir, A, 'tombstones')).toMatchObject([{ table_name: 'sites', id: S1, _src_lsn: 20 }]);
  expect(companyRows(dir, B, 'tombstones')).toEqual([]);
  expect(controlRows(dir, 'routes')).toMatchObject([
    { table_name: 'sites', id: S1, company_id: B, _src_lsn: 20 },
  ]);
}

describe('a move on company-keyed partitions', () => {
  it('(a) across two writers: the old one deletes from the old company, the new one creates in the new', () => {
    const old = open();
    old.store.applyBatch([CREATED]);
    expect(old.store.applyBatch([MOVE_D])).toMatchObject({ applied: 1 });
    expect(companyRows(old.dir, A, 'sites')).toEqual([]);
    expect(companyRows(old.dir, A, 'tombstones')).toMatchObject([{ id: S1, _src_lsn: 20 }]);

    const gaining = open();
    expect(gaining.store.applyBatch([MOVE_C])).toMatchObject({ applied: 1 });
    expect(companyRows(gaining.dir, B, 'sites')).toMatchObject([{ id: S1, name: 'Moved to B', notes: LONG }]);

    // Replays on each side change nothing.
    const before = [dump(old.dir, true), dump(gaining.dir, true)];
    expect(old.store.applyBatch([CREATED, MOVE_D]).applied).toBe(0);
    expect(gaining.store.applyBatch([MOVE_C]).applied).toBe(0);
    expect([dump(old.dir, true), dump(gaining.dir, true)]).toEqual(before);
    old.store.close();
    gaining.store.close();
  });

  const orders: [string, Change[][]][] = [
    ['d then c, one batch', [[MOVE_D, MOVE_C]]],
    ['c then d, one batch', [[MOVE_C, MOVE_D]]],
    ['d then c, two batches', [[MOVE_D], [MOVE_C]]],
    ['c then d, two batches', [[MOVE_C], [MOVE_D]]],
  ];

  it.each(orders)(
    '(b) both partitions on one writer, %s: the row ends in the new company only',
    (_, batches) => {
      const { dir, store } = open();
      store.applyBatch([CREATED]);
      let applied = 0;
      for (const batch of batches) applied += store.applyBatch(batch).applied;
      expect(applied).toBeGreaterThanOrEqual(1);
      expectMoved(dir);

      // (c) Replays and duplicates of either event, in any order, never move it back or delete it.
      const settled = dump(dir, true);
      for (const replay of [
        [MOVE_D],
        [MOVE_C],
        [MOVE_D, MOVE_C],
        [MOVE_C, MOVE_D],
        [CREATED, MOVE_D],
        [CREATED],
      ]) {
        expect(store.applyBatch(replay).applied, JSON.stringify(replay.map((c) => c.kind))).toBe(0);
        expect(dump(dir, true)).toEqual(settled);
      }
      store.close();
    },
  );

  it.each(orders)(
    '(b) on a writer that never saw the row (a rebuild from compacted topics), %s',
    (_, batches) => {
      const { dir, store } = open();
      for (const batch of batches) store.applyBatch(batch);
      expectMoved(dir);
      const settled = dump(dir, true);
      expect(store.applyBatch([MOVE_C, MOVE_D]).applied).toBe(0);
      expect(dump(dir, true)).toEqual(settled);
      store.close();
    },
  );

  it('(c) a later update in the new company is not undone by a late d of the move', () => {
    const { dir, store } = open();
    store.applyBatch([CREATED, MOVE_C]);
    store.applyBatch([keyedSite(B, 30, { name: 'Later', notes: LONG }, 'u')]);
    // A already holds the move's tombstone (left by the c): the late d is a duplicate there.
    expect(store.applyBatch([MOVE_D]).applied).toBe(0);
    expect(companyRows(dir, B, 'sites')).toMatchObject([{ id: S1, name: 'Later', _src_lsn: 30 }]);
    expect(controlRows(dir, 'routes')).toMatchObject([{ company_id: B }]);
    store.close();
  });

  it('(c) a move back (B → A at 30) is not undone by a replay of the first move', () => {
    const { dir, store } = open();
    store.applyBatch([CREATED, MOVE_D, MOVE_C]);
    store.applyBatch([keyedDelete(B, 30), keyedSite(A, 30, { name: 'Back in A', notes: LONG })]);
    const settled = dump(dir, true);
    expect(store.applyBatch([MOVE_C, MOVE_D]).applied).toBe(0);
    expect(store.applyBatch([MOVE_D]).applied).toBe(0);
    expect(dump(dir, true)).toEqual(settled);
    expect(companyRows(dir, A, 'sites')).toMatchObject([{ id: S1, name: 'Back in A', _src_lsn: 30 }]);
    expect(companyRows(dir, B, 'sites')).toEqual([]);
    store.close();
  });

  it('a d keyed with a company deletes the row from that company only, never from the one its route names', () => {
    const { dir, store } = open();
    store.applyBatch([keyedSite(B, 10)]);
    store.applyBatch([keyedDelete(C, 15)]);
    expect(companyRows(dir, B, 'sites')).toMatchObject([{ id: S1, _src_lsn: 10 }]);
    expect(companyRows(dir, C, 'tombstones')).toMatchObject([{ id: S1, _src_lsn: 15 }]);
    expect(controlRows(dir, 'routes')).toMatchObject([{ company_id: B, _src_lsn: 10 }]);
    // A real DELETE of the row in its own company still deletes it.
    store.applyBatch([keyedDelete(B, 40)]);
    expect(companyRows(dir, B, 'sites')).toEqual([]);
    expect(companyRows(dir, B, 'tombstones')).toMatchObject([{ id: S1, _src_lsn: 40 }]);
    store.close();
  });

  it('a d keyed with a company that is not a uuid is refused, not applied', () => {
    const { store } = open();
    const result = store.applyBatch([makeDelete('sites', { id: S1, company_id: 'nope' }, 5)]);
    expect(result).toMatchObject({ applied: 0, rejected: 1 });
    store.close();
  });

  it('(d) unpartitioned keys: an upsert at the route position naming another company is still skipped', () => {
    const { dir, store } = open();
    const plain = (companyId: string, lsn: number) =>
      makeUpsert('sites', sampleRow('sites', { id: S1, company_id: companyId }), lsn, { op: 'u' });
    store.applyBatch([plain(A, 10), plain(B, 20)]);
    expect(store.applyBatch([plain(C, 20)])).toMatchObject({ applied: 0, skipped: 1 });
    expect(controlRows(dir, 'routes')).toMatchObject([{ company_id: B, _src_lsn: 20 }]);
    // And a key-only delete still follows the route.
    store.applyBatch([makeDelete('sites', { id: S1 }, 30)]);
    expect(companyRows(dir, B, 'tombstones')).toMatchObject([{ id: S1, _src_lsn: 30 }]);
    store.close();
  });
});

describe('a writer split by company (ownedPartitions)', () => {
  it('keeps every company row in control.sqlite but creates files only for its own companies', () => {
    const dir = tempDataDir();
    const mine = [A, B, C].find((c) => companyPartition(c, 2) === 0) as string;
    const theirs = [A, B, C].find((c) => companyPartition(c, 2) === 1) as string;
    const store = ProjectionStore.open({ dataDir: dir, ownedPartitions: { partitions: 2, applied: [0] } });
    store.applyBatch([
      makeUpsert('companies', sampleRow('companies', { id: mine }), 1),
      makeUpsert('companies', sampleRow('companies', { id: theirs }), 2),
    ]);
    expect(controlRows(dir, 'companies').map((r) => r.id)).toEqual([mine, theirs].sort());
    expect(listCompanyFiles(dir)).toEqual([mine]);
    store.close();
  });
});
