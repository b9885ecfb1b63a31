import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Change, companyPath } from '../src/model/index.ts';
import { makeDelete, makeUpsert, sampleRow } from '../src/testing/index.ts';
import { ProjectionStore, RebuildNotCaughtUpError } from '../src/write/index.ts';
import { A, B, C, companyRows, controlRows, id, tempDataDir } from './helpers.ts';

const site = (n: number, company: string, lsn: number, name = `site ${n}`): Change =>
  makeUpsert('sites', sampleRow('sites', { id: id(n), company_id: company, name }), lsn);

/** Three companies with two sites each, applied; the store stays open. */
function seeded() {
  const dir = tempDataDir();
  let now = 1_000;
  const store = ProjectionStore.open({ dataDir: dir, nowMs: () => now, idleCloseMs: 0 });
  store.applyBatch([
    site(1, A, 10),
    site(2, A, 11),
    site(3, B, 12),
    site(4, B, 13),
    site(5, C, 14),
    site(6, C, 15),
  ]);
  const tick = (ms: number) => {
    now += ms;
  };
  return { dir, store, tick };
}

const names = (dir: string, company: string) =>
  companyRows(dir, company, 'sites').map((r) => `${r.id as string}:${r.name as string}`);

describe('damaged company files', () => {
  it('a file deleted while open is found, its company taken out of service, the others go on', () => {
    const { dir, store, tick } = seeded();
    rmSync(companyPath(dir, B));
    tick(5_000); // past the on-disk check interval
    const result = store.applyBatch([site(1, A, 20, 'a2'), site(3, B, 21, 'b2'), site(5, C, 22, 'c2')]);
    expect(result.faults.detected).toEqual([
      expect.objectContaining({ companyId: B, state: 'damaged', reason: expect.stringMatching(/^missing/) }),
    ]);
    expect(result.applied).toBe(2);
    expect(result.skipped).toBe(1);
    expect(names(dir, A)).toContain(`${id(1)}:a2`);
    expect(names(dir, C)).toContain(`${id(5)}:c2`);
    // Never created again empty: later changes of B are skipped while it is out of service.
    store.applyBatch([site(7, B, 23)]);
    expect(existsSync(companyPath(dir, B))).toBe(false);
    expect(controlRows(dir, 'company_faults')).toEqual([
      expect.objectContaining({ company_id: B, state: 'damaged', moved_to: null }),
    ]);
    store.close();
  });

  it('a file deleted while closed is found when next opened, also after a restart', () => {
    const { dir, store } = seeded();
    store.close();
    rmSync(companyPath(dir, C));
    const again = ProjectionStore.open({ dataDir: dir });
    const result = again.applyBatch([site(5, C, 30, 'c3'), site(1, A, 31, 'a3')]);
    expect(result.faults.detected.map((f) => [f.companyId, f.reason])).toEqual([
      [C, 'missing: the file was deleted while closed'],
    ]);
    expect(result.applied).toBe(1);
    expect(existsSync(companyPath(dir, C))).toBe(false);
    again.close();
    // The fault is in control.sqlite: a restarted writer still skips the company.
    const third = ProjectionStore.open({ dataDir: dir });
    expect(third.applyBatch([site(5, C, 32)]).skipped).toBe(1);
    expect(third.companyFaults().map((f) => f.companyId)).toEqual([C]);
    third.close();
  });

  it('an overwritten file is moved aside (nothing of it left in its place), and only its company stops', () => {
    const { dir, store, tick } = seeded();
    const fd = openSync(companyPath(dir, A), 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, 0);
    tick(5_000);
    const result = store.applyBatch([site(1, A, 40, 'a4'), site(3, B, 41, 'b4')]);
    expect(result.faults.detected).toEqual([expect.objectContaining({ companyId: A, state: 'damaged' })]);
    expect(result.faults.detected[0]?.reason).toMatch(/^corrupt/);
    expect(result.faults.detected[0]?.movedTo).toMatch(/\.sqlite\.damaged-\d+$/);
    // Closing the writer checkpointed and removed its WAL; a -wal left in place would be replayed
    // into the rebuilt file, so none may remain under the company's name.
    expect(readdirSync(join(dir, 'companies')).filter((n) => n.startsWith(A))).toEqual([
      expect.stringMatching(/\.sqlite\.damaged-\d+$/),
    ]);
    expect(names(dir, B)).toContain(`${id(3)}:b4`);
    store.close();
  });

  it('a file overwritten in place is found before the writer checkpoints into it (a checkpoint would write its header back)', () => {
    const { dir, store, tick } = seeded();
    const path = companyPath(dir, A);
    const fd = openSync(path, 'r+');
    writeSync(fd, randomBytes(statSync(path).size));
    closeSync(fd);
    // Batches within the on-disk check's interval, until the WAL is due a checkpoint: that
    // checkpoint must not run. SQLite's automatic one did, healing the header, and the next
    // periodic check (below) saw nothing wrong.
    let lsn = 100;
    const detected: string[] = [];
    for (let batch = 0; batch < 400 && detected.length === 0; batch++) {
      const changes = Array.from({ length: 20 }, (_, n) =>
        makeUpsert(
          'sites',
          sampleRow('sites', { id: id(100 + n), company_id: A, notes: `${batch}`.repeat(400) }),
          lsn++,
        ),
      );
      tick(1);
      detected.push(...store.applyBatch(changes).faults.detected.map((f) => f.companyId));
    }
    tick(5_000);
    detected.push(...store.applyBatch([site(1, A, lsn++, 'a5')]).faults.detected.map((f) => f.companyId));
    expect(detected).toEqual([A]);
    expect(store.companyFaults()).toEqual([
      expect.objectContaining({ companyId: A, reason: expect.stringMatching(/^corrupt/) }),
    ]);
    store.close();
  });

  it('a file overwritten in place and then closed is reported by the next check (its closing checkpoint cannot be held back)', () => {
    const dir = tempDataDir();
    let now = 1_000;
    // One open file: opening B closes A.
    const store = ProjectionStore.open({ dataDir: dir, nowMs: () => now, maxOpenCompanies: 1 });
    store.applyBatch([site(1, A, 10)]);
    const path = companyPath(dir, A);
    const fd = openSync(path, 'r+');
    writeSync(fd, randomBytes(statSync(path).size));
    closeSync(fd);
    now += 500; // within the check interval: this batch closes A before any check looks at it
    expect(store.applyBatch([site(3, B, 11)]).faults.detected).toEqual([]);
    now += 2_500;
    const result = store.applyBatch([site(3, B, 12, 'b2')]);
    expect(result.faults.detected).toEqual([
      expect.objectContaining({ companyId: A, state: 'damaged', reason: expect.stringMatching(/^corrupt/) }),
    ]);
    expect(names(dir, B)).toContain(`${id(3)}:b2`);
    expect(store.applyBatch([site(1, A, 13, 'a2')]).skipped).toBe(1);
    store.close();
  });

  it('a rebuild replays the company from the backfill, moves out of it included, and finishes once it covers the live batches', () => {
    const { dir, store, tick } = seeded();
    const notes = 'n'.repeat(3000);
    const withNotes = (n: number, company: string, lsn: number, name: string): Change =>
      makeUpsert('sites', sampleRow('sites', { id: id(n), company_id: company, name, notes }), lsn);
    // The topics as the backfill reads them again (in order): the seed, then what came later.
    const history: Change[] = [
      site(1, A, 10),
      site(2, A, 11),
      withNotes(3, B, 12, 'site 3'),
      site(4, B, 13),
      site(5, C, 14),
      site(6, C, 15),
      site(9, B, 16),
    ];
    store.applyBatch(history.slice(2, 3)); // site 3's notes are in B's file only
    store.applyBatch(history.slice(6));
    rmSync(companyPath(dir, B));
    tick(5_000);
    // While B is damaged: site 3 moves to A by an update that left the TOASTed notes out (its
    // move waits: its values are in B's lost file), site 4 is deleted, site 5 moves into B.
    const later: Change[] = [
      makeUpsert('sites', sampleRow('sites', { id: id(3), company_id: A, name: 'moved to A' }), 50, {
        unavailable: ['notes'],
      }),
      makeDelete('sites', { id: id(4) }, 51),
      site(5, B, 52, 'moved to B'),
      // Out and back again while B is damaged: both moves wait; A must not keep it.
      site(9, A, 53, 'out'),
      site(9, B, 54, 'back in B'),
    ];
    store.applyBatch(later);
    expect(store.companyFaults()[0]).toMatchObject({ companyId: B, state: 'damaged' });
    expect(names(dir, A)).toEqual([`${id(1)}:site 1`, `${id(2)}:site 2`]);

    expect(store.startCompanyRebuild(B).state).toBe('rebuilding');
    // A live change of B after the start is skipped too, and recorded as the live position.
    const live = {
      ...site(8, B, 60, 'live'),
      origin: { topic: 'pda.public.sites', partition: 0, offset: '9' },
    };
    store.applyBatch([live]);
    expect(() => store.finishCompanyRebuild(B)).toThrow(RebuildNotCaughtUpError);
    expect(() => store.finishCompanyRebuild(A)).toThrow(/not being rebuilt/);
    // The backfill fills the move's notes from the earlier event, as company-rebuild.ts does.
    const filled = {
      ...(later[0] as Change),
      row: { ...(later[0] as { row: object }).row, notes },
      unavailable: [],
    };
    const backfill = [...history, filled as Change, ...later.slice(1), live];
    store.applyBatch(backfill.slice(0, 6), { onlyCompany: B, readUpTo: { 'pda.public.sites/0': '4' } });
    expect(() => store.finishCompanyRebuild(B)).toThrow(/read pda.public.sites\/0 up to 4/);
    store.applyBatch(backfill.slice(6), { onlyCompany: B, readUpTo: { 'pda.public.sites/0': '9' } });
    store.finishCompanyRebuild(B);
    expect(store.companyFaults()).toEqual([]);
    expect(names(dir, B)).toEqual([`${id(5)}:moved to B`, `${id(8)}:live`, `${id(9)}:back in B`]);
    expect(controlRows(dir, 'routes').find((r) => r.id === id(9))).toMatchObject({
      company_id: B,
      _src_lsn: 54,
    });
    // The move that waited reached A with its notes; C is as before (the backfill wrote nothing else).
    expect(companyRows(dir, A, 'sites').map((r) => [r.name, r.notes])).toEqual([
      ['site 1', expect.anything()],
      ['site 2', expect.anything()],
      ['moved to A', notes],
    ]);
    expect(controlRows(dir, 'routes').find((r) => r.id === id(3))).toMatchObject({
      company_id: A,
      _src_lsn: 50,
    });
    expect(names(dir, C)).toEqual([`${id(6)}:site 6`]); // site 5 left it for B (a move into B, not out)
    expect(controlRows(dir, 'company_faults')).toEqual([]);
    store.close();
  });

  it('refuses a backfill for a company that is not being rebuilt', () => {
    const { store } = seeded();
    expect(() => store.applyBatch([site(1, A, 90)], { onlyCompany: A })).toThrow(/not being rebuilt/);
    store.close();
  });
});
