import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { companyPath } from '../src/model/index.ts';
import { ReadHandle, readDeletions, readTombstonesSince } from '../src/read/index.ts';
import { makeDelete, makeTruncate, makeUpsert, sampleRow } from '../src/testing/index.ts';
import {
  openCompanyWriter,
  ProjectionStore,
  type PruneCursor,
  type PruneOptions,
} from '../src/write/index.ts';
import { A, B, C, companyRows, fixedClock, id, tempDataDir } from './helpers.ts';

// Tombstones feed GET /v1/deletions and are kept for a retention window
// (projections/README.md, "Tombstones and the deletions feed"): meta.tombstones_since_us says
// from which change time a file's tombstones are complete, pruning deletes the oldest in bounded
// steps and moves it up, a TRUNCATE leaves a tombstone per row.

const site = (n: number, companyId: string, lsn: number) =>
  makeUpsert('sites', sampleRow('sites', { id: id(n), company_id: companyId }), lsn);
const service = (n: number, companyId: string, lsn: number) =>
  makeUpsert('services', sampleRow('services', { id: id(n), company_id: companyId }), lsn);

function since(dir: string, companyId: string): number {
  return companyRows(dir, companyId, 'meta', true)[0]?.tombstones_since_us as number;
}

function tombstoneIds(dir: string, companyId: string): string[] {
  return companyRows(dir, companyId, 'tombstones').map((row) => row.id as string);
}

/** Runs a whole pass, step by step, and returns the steps. */
function prunePass(store: ProjectionStore, options: PruneOptions) {
  const steps = [];
  let cursor: PruneCursor | undefined;
  do {
    const step = store.pruneTombstones(options, cursor);
    steps.push(step);
    cursor = step.next ?? undefined;
  } while (cursor);
  return steps;
}

function reader(dir: string, companyId: string): ReadHandle {
  const db = new Database(companyPath(dir, companyId), { readonly: true });
  return new ReadHandle(db);
}

describe('meta.tombstones_since_us', () => {
  it('a new file vouches for its tombstones from its creation on (the writer clock)', () => {
    const dir = tempDataDir();
    const clock = fixedClock(7_000_000);
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch([site(1, A, 10)]);
    clock.set(9_000_000);
    store.applyBatch([site(2, A, 11)]);
    store.close();
    expect(since(dir, A)).toBe(7_000_000);
  });

  it('a file upgraded from version 3 vouches only for deletes after the upgrade', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(5_000_000) });
    store.applyBatch([site(1, A, 10), makeDelete('sites', { id: id(1) }, 11)]);
    store.close();
    // Turn it back into a version-3 file with a change time handed out, then reopen as the writer.
    const raw = new Database(companyPath(dir, A));
    raw.exec(
      'DROP INDEX tombstones_by_changed; ALTER TABLE meta DROP COLUMN tombstones_since_us; ALTER TABLE meta DROP COLUMN created_us',
    );
    raw.exec('UPDATE meta SET last_changed_us = 6000000');
    raw.pragma('user_version = 3');
    raw.close();
    openCompanyWriter(dir, A).close();
    expect(since(dir, A)).toBe(6_000_001);
  });
});

describe('pruning tombstones', () => {
  function setup() {
    const dir = tempDataDir();
    const clock = fixedClock(1_000_000);
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    // Five sites deleted at change times around 1 s, two more around 100 s; company B has one old.
    store.applyBatch([...[1, 2, 3, 4, 5, 6, 7].map((n) => site(n, A, n)), site(8, B, 8)]);
    store.applyBatch([1, 2, 3, 4, 5, 8].map((n) => makeDelete('sites', { id: id(n) }, 100 + n)));
    clock.set(100_000_000);
    store.applyBatch([6, 7].map((n) => makeDelete('sites', { id: id(n) }, 200 + n)));
    clock.set(200_000_000);
    return { dir, clock, store };
  }

  it('deletes only tombstones older than the window, in bounded steps, and moves the horizon', () => {
    const { dir, store } = setup();
    // Window 150 s at 200 s: the cutoff is 50 s; A has five tombstones below it, B one.
    const steps = prunePass(store, { retentionUs: 150_000_000, maxRows: 2, maxFiles: 10 });
    expect(steps.every((step) => step.cutoffUs === 50_000_000)).toBe(true);
    expect(steps.map((step) => step.pruned)).toEqual([2, 2, 2]);
    expect(steps.reduce((sum, step) => sum + step.pruned, 0)).toBe(6);
    expect(tombstoneIds(dir, A)).toEqual([id(6), id(7)]);
    expect(tombstoneIds(dir, B)).toEqual([]);
    expect(since(dir, A)).toBe(50_000_000);
    expect(since(dir, B)).toBe(50_000_000);
    store.close();
  });

  it('a step that stops inside a file vouches only from just after its last deleted tombstone', () => {
    const { dir, store } = setup();
    const first = store.pruneTombstones({ retentionUs: 150_000_000, maxRows: 2, maxFiles: 10 });
    expect(first.pruned).toBe(2);
    expect(first.next).toEqual({ cutoffUs: 50_000_000, from: A });
    const left = companyRows(dir, A, 'tombstones', true).map((row) => row._changed_us as number);
    expect(left).toHaveLength(5);
    expect(since(dir, A)).toBeLessThanOrEqual(Math.min(...left));
    expect(since(dir, A)).toBeGreaterThan(1_000_000);
    store.close();
  });

  it('looks at a bounded number of files per step and walks every file in id order', () => {
    const { dir, store } = setup();
    store.applyBatch([site(9, C, 9), makeDelete('sites', { id: id(9) }, 109)]); // recent: kept
    const steps = prunePass(store, { retentionUs: 150_000_000, maxRows: 100, maxFiles: 1 });
    expect(steps.map((step) => [step.filesVisited, step.filesPruned, step.next?.from ?? null])).toEqual([
      [1, 1, B],
      [1, 1, C],
      [1, 0, null],
    ]);
    expect(tombstoneIds(dir, C)).toEqual([id(9)]);
    store.close();
  });

  it('nothing to prune: no write, the horizon stays', () => {
    const { dir, store } = setup();
    const before = since(dir, A);
    const steps = prunePass(store, { retentionUs: 300_000_000, maxRows: 100, maxFiles: 10 });
    expect(steps.reduce((sum, step) => sum + step.pruned, 0)).toBe(0);
    expect(tombstoneIds(dir, A)).toHaveLength(7);
    expect(since(dir, A)).toBe(before);
    store.close();
  });

  it('a pruned tombstone no longer guards: a redelivered delete writes a new one (a duplicate in the feed)', () => {
    const { dir, store } = setup();
    prunePass(store, { retentionUs: 150_000_000, maxRows: 100, maxFiles: 10 });
    store.applyBatch([makeDelete('sites', { id: id(1) }, 101)]);
    expect(companyRows(dir, A, 'tombstones', true)).toContainEqual(
      expect.objectContaining({ id: id(1), _src_lsn: 101, _changed_us: 200_000_000 }),
    );
    store.close();
  });
});

describe('TRUNCATE and tombstones', () => {
  it('leaves a tombstone per truncated row at its position and keeps the older tombstones', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, clockUs: fixedClock(1_000_000) });
    store.applyBatch([site(1, A, 1), site(2, A, 2), service(3, A, 3), makeDelete('sites', { id: id(1) }, 4)]);
    store.applyBatch([makeTruncate('sites', 50)]);
    const tombstones = companyRows(dir, A, 'tombstones', true);
    const truncatedAt = companyRows(dir, A, 'truncations', true)[0]?._changed_us;
    expect(tombstones).toEqual([
      { table_name: 'sites', id: id(1), _src_lsn: 4, _changed_us: expect.any(Number) },
      { table_name: 'sites', id: id(2), _src_lsn: 50, _changed_us: truncatedAt },
    ]);
    expect(companyRows(dir, A, 'services')).toHaveLength(1);
    // A create newer than the TRUNCATE brings the row back and removes its tombstone.
    store.applyBatch([site(2, A, 60)]);
    expect(tombstoneIds(dir, A)).toEqual([id(1)]);
    store.close();
  });
});

describe('readDeletions', () => {
  function setup() {
    const dir = tempDataDir();
    const clock = fixedClock(1_000_000);
    const store = ProjectionStore.open({ dataDir: dir, clockUs: clock });
    store.applyBatch([
      ...[1, 2, 3].map((n) => site(n, A, n)),
      ...[4, 5].map((n) => service(n, A, n)),
      makeUpsert(
        'site_contacts',
        sampleRow('site_contacts', { id: id(6), company_id: A, site_id: id(3) }),
        6,
      ),
    ]);
    clock.set(2_000_000);
    store.applyBatch([
      makeDelete('sites', { id: id(2) }, 10),
      makeDelete('services', { id: id(4) }, 11),
      makeDelete('site_contacts', { id: id(6) }, 12),
      makeDelete('sites', { id: id(1) }, 13),
      makeDelete('services', { id: id(5) }, 14),
    ]);
    store.close();
    return { dir, handle: reader(dir, A) };
  }

  const ids = (rows: readonly { id: string }[]) => rows.map((row) => row.id);

  it('lists the tombstones of the asked tables in change-time order, at or after the time', () => {
    const { handle } = setup();
    const all = readDeletions(handle, {
      tables: ['sites', 'services'],
      sinceUs: 0,
      limit: 10,
      direction: 'after',
    });
    expect(all.rows.map((row) => [row.table, row.id])).toEqual([
      ['sites', id(2)],
      ['services', id(4)],
      ['sites', id(1)],
      ['services', id(5)],
    ]);
    const times = all.rows.map((row) => row.changedUs);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(4);
    expect(all.hasMore).toBe(false);
    const sitesOnly = readDeletions(handle, {
      tables: ['sites'],
      sinceUs: 2_000_001,
      limit: 10,
      direction: 'after',
    });
    expect(ids(sitesOnly.rows)).toEqual([id(1)]);
    handle.close();
  });

  it('pages forward and back from a position', () => {
    const { handle } = setup();
    const request = { tables: ['sites', 'services'] as const, sinceUs: 0, limit: 2 };
    const first = readDeletions(handle, { ...request, tables: [...request.tables], direction: 'after' });
    expect(ids(first.rows)).toEqual([id(2), id(4)]);
    expect(first.hasMore).toBe(true);
    const last = first.rows[1]!;
    const second = readDeletions(handle, {
      ...request,
      tables: [...request.tables],
      direction: 'after',
      position: { changedUs: last.changedUs, table: last.table, id: last.id },
    });
    expect(ids(second.rows)).toEqual([id(1), id(5)]);
    expect(second.hasMore).toBe(false);
    const head = second.rows[0]!;
    const back = readDeletions(handle, {
      ...request,
      tables: [...request.tables],
      direction: 'before',
      position: { changedUs: head.changedUs, table: head.table, id: head.id },
    });
    expect(ids(back.rows)).toEqual([id(2), id(4)]);
    expect(back.hasMore).toBe(false);
    expect(readTombstonesSince(handle)).toBe(1_000_000);
    handle.close();
  });
});
