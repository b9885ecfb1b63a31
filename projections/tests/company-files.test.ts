import { existsSync, mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { companyPath } from '../src/model/paths.ts';
import { openCompanyReader } from '../src/read/index.ts';
import { makeUpsert, sampleRow } from '../src/testing/index.ts';
import { CompanyFiles } from '../src/write/files/company-files.ts';
import { ProjectionStore } from '../src/write/index.ts';
import { fixedClock, id, tempDataDir } from './helpers.ts';

// The writer's bounded set of open company files (src/write/files/company-files.ts): never more open than
// the bound, least recently used first out, and whatever leaves is closed (its descriptors freed).
describe('CompanyFiles', () => {
  it('keeps at most the bound open, evicts the least recently used and closes it; reopening works', () => {
    const dir = tempDataDir();
    const files = new CompanyFiles(dir, 3, fixedClock());
    const a = files.get(id(1));
    const b = files.get(id(2));
    const c = files.get(id(3));
    expect(files.get(id(1))).toBe(a); // cached, and now the most recent
    const d = files.get(id(4));
    expect(files.size).toBe(3);
    expect(b.db.open).toBe(false);
    expect([a, c, d].map((f) => f.db.open)).toEqual([true, true, true]);

    for (let n = 5; n <= 12; n++) {
      files.get(id(n));
      expect(files.size).toBeLessThanOrEqual(3);
    }
    expect([a, c, d].map((f) => f.db.open)).toEqual([false, false, false]);

    const again = files.get(id(2));
    expect(again).not.toBe(b);
    again.db.exec(
      `INSERT INTO tombstones (table_name, id, _src_lsn, _changed_us) VALUES ('sites', 'x', 1, 1)`,
    );
    expect(again.db.prepare('SELECT count(*) FROM tombstones').pluck().get()).toBe(1);
    files.closeAll();
    expect(again.db.open).toBe(false);
    expect(files.size).toBe(0);
  });

  it('a file that cannot be opened gives back half of the open files, retries once, then throws', () => {
    const dir = tempDataDir();
    const files = new CompanyFiles(dir, 10, fixedClock());
    const open = [1, 2, 3, 4].map((n) => files.get(id(n)));
    // A directory where the file should be: SQLITE_CANTOPEN, as when out of file descriptors.
    mkdirSync(companyPath(dir, id(9)), { recursive: true });
    expect(() => files.get(id(9))).toThrow(expect.objectContaining({ code: 'SQLITE_CANTOPEN' }));
    expect(open.map((f) => f.db.open)).toEqual([false, false, true, true]);
    expect(files.size).toBe(2);
    files.closeAll();
  });

  it('counts files opened and evicted; a batch visits open files first, so only those beyond the bound reopen', () => {
    const dir = tempDataDir();
    const store = ProjectionStore.open({ dataDir: dir, maxOpenCompanies: 4, clockUs: fixedClock() });
    let lsn = 1;
    const companies = [1, 2, 3, 4, 5, 6].map(id);
    store.applyBatch(companies.map((c) => makeUpsert('companies', sampleRow('companies', { id: c }), lsn++)));
    const sites = (n: number) =>
      companies.map((c, i) =>
        makeUpsert('sites', sampleRow('sites', { id: id(1000 + n * 10 + i), company_id: c }), lsn++),
      );
    store.applyBatch(sites(0));
    // Six companies, four open: in visiting order an LRU would reopen all six every batch.
    for (let n = 1; n <= 3; n++) {
      const result = store.applyBatch(sites(n));
      expect(result.applied).toBe(6);
      expect(result.files).toEqual({ opened: 2, evicted: 2, closedIdle: 0, open: 4, max: 4 });
    }
    store.close();
  });

  it('closes the files no batch wrote to for the idle time, with their -wal and -shm; others stay open', () => {
    const dir = tempDataDir();
    let now = 1_000_000;
    const store = ProjectionStore.open({
      dataDir: dir,
      maxOpenCompanies: 10,
      clockUs: fixedClock(),
      idleCloseMs: 60_000,
      nowMs: () => now,
    });
    let lsn = 1;
    const [quiet, busy] = [id(1), id(2)];
    store.applyBatch(
      [quiet, busy].map((c) => makeUpsert('companies', sampleRow('companies', { id: c }), lsn++)),
    );
    const site = (company: string, n: number) =>
      makeUpsert('sites', sampleRow('sites', { id: id(100 + n), company_id: company }), lsn++);
    store.applyBatch([site(quiet, 1), site(busy, 2)]);
    expect(existsSync(`${companyPath(dir, quiet)}-wal`)).toBe(true);

    now += 40_000;
    expect(store.applyBatch([site(busy, 3)]).files).toMatchObject({ closedIdle: 0, open: 2 });
    now += 30_000; // quiet: 70 s without a write; busy: 30 s
    expect(store.applyBatch([site(busy, 4)]).files).toMatchObject({ closedIdle: 1, open: 1 });
    expect(existsSync(`${companyPath(dir, quiet)}-wal`)).toBe(false);
    expect(existsSync(`${companyPath(dir, quiet)}-shm`)).toBe(false);
    expect(existsSync(`${companyPath(dir, busy)}-wal`)).toBe(true);

    // The quiet tenant changes again: reopened, nothing lost.
    const result = store.applyBatch([site(quiet, 5)]);
    expect(result.files).toMatchObject({ opened: 1, closedIdle: 0, open: 2 });
    expect(result.applied).toBe(1);
    store.close();
    const db = openCompanyReader(dir, quiet);
    expect(db.prepare('SELECT count(*) FROM sites').pluck().get()).toBe(2);
    db.close();
  });
});
