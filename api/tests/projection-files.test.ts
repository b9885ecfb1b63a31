import {
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { companyPath, controlPath, OutOfDescriptorsError } from '@pda/projections/model';
import { openCompanyReader } from '@pda/projections/read';
import { buildProjection, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter } from '@pda/projections/write';
import { afterEach, describe, expect, test } from 'vitest';
import { ProjectionFiles } from '../src/company-files/projection-files.ts';
import { expectProblem } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Read-only handles: reopened when a rebuild swaps the files, bounded LRU, and a file the api
// does not understand (newer schema, missing) is a 503, never a wrong answer or a 500.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function fixture(): Fixture {
  const f = createFixture();
  cleanups.push(f.cleanup);
  return f;
}

function setUserVersion(file: string, version: number): void {
  const db = openWriter(file);
  db.pragma(`user_version = ${version}`);
  db.close();
}

describe('rebuild swap', () => {
  test('a data dir symlink re-pointed to a rebuilt generation is picked up without a restart', async () => {
    const gen1 = fixture();
    const gen2 = fixture();
    const extra = uuid(0x1a, 999);
    buildProjection(gen2.dataDir, [
      makeUpsert('sites', sampleRow('sites', { id: extra, company_id: COMPANY.A }), 9_000_000),
    ]);
    const current = join(dirname(gen1.dataDir), `pda-current-${process.pid}-${Date.now()}`);
    symlinkSync(gen1.dataDir, current);
    cleanups.push(() => rmSync(current, { force: true }));

    const app = await testApp(current);
    const list = async () =>
      (await app.inject({ url: '/v1/sites', headers: bearer(gen1.keys.a) }))
        .json()
        .data.map((r: { id: string }) => r.id);
    expect(await list()).toEqual(gen1.ids.A.sites);

    // The swap: a new symlink renamed over the old one (atomic on POSIX).
    const next = `${current}.next`;
    symlinkSync(gen2.dataDir, next);
    renameSync(next, current);
    expect(await list()).toEqual([...gen1.ids.A.sites, extra]);
    await app.close();
  });
});

describe('handle LRU', () => {
  test('with room for one company file, alternating companies still get their own data', async () => {
    const f = fixture();
    const app = await testApp(f.dataDir, { env: { API_MAX_OPEN_COMPANIES: '1' } });
    for (let i = 0; i < 4; i++) {
      for (const name of ['A', 'B'] as const) {
        const response = await app.inject({
          url: '/v1/sites',
          headers: { ...bearer(f.keys.multi), 'x-service-company': COMPANY[name] },
        });
        expect(response.json().data.map((r: { id: string }) => r.id)).toEqual(f.ids[name].sites);
        // Each cache within its bound: the loop's, or each reader thread's when pages are read there.
        expect(app.projections.openCompanyCount).toBe(app.readPool ? 0 : 1);
        if (app.readPool) {
          expect(app.readPool.counts().companyFiles.open).toBeLessThanOrEqual(app.config.readThreads);
        }
      }
    }
    await app.close();
  });
});

describe('ProjectionFiles', () => {
  test('the least recently used company handle is closed when evicted; close() closes the rest', () => {
    const f = fixture();
    const files = new ProjectionFiles(f.dataDir, { maxOpenCompanies: 1, reopenCheckMs: 0, now: Date.now });
    const a = files.company(COMPANY.A);
    expect(files.company(COMPANY.A)).toBe(a);
    const b = files.company(COMPANY.B);
    expect(a.db.open).toBe(false);
    expect(b.db.open).toBe(true);
    expect(files.company(COMPANY.A)).not.toBe(a);
    expect(b.db.open).toBe(false);
    const again = files.company(COMPANY.A);
    files.close();
    expect(again.db.open).toBe(false);
    expect(files.openCompanyCount).toBe(0);
    expect(files.counts()).toMatchObject({ hits: 2, misses: 3, evictions: 2, open: 0, max: 1 });
  });

  test('out of descriptors: half of the open files are closed and the open retried once; failing again it throws', () => {
    const f = fixture();
    let failures = 0;
    const openCompany = (dataDir: string, companyId: string) => {
      if (failures > 0) {
        failures--;
        throw new OutOfDescriptorsError(companyPath(dataDir, companyId));
      }
      return openCompanyReader(dataDir, companyId);
    };
    const files = new ProjectionFiles(f.dataDir, {
      maxOpenCompanies: 10,
      reopenCheckMs: 0,
      now: Date.now,
      openCompany,
    });
    const a = files.company(COMPANY.A);
    const b = files.company(COMPANY.B);
    failures = 1;
    const c = files.company(COMPANY.C);
    expect([a.db.open, b.db.open, c.db.open]).toEqual([false, true, true]);
    expect(files.counts()).toMatchObject({ misses: 3, evictions: 1, open: 2 });

    failures = 2;
    expect(() => files.company(COMPANY.A)).toThrow(OutOfDescriptorsError);
    expect(files.counts()).toMatchObject({ evictions: 2, open: 1 });
    files.close();
  });

  test('a company file that is not a readable database → 503 service_unavailable, not a 500', async () => {
    const f = fixture();
    const app = await testApp(f.dataDir);
    // A directory in the file's place: opening works, the first read is an I/O error.
    rmSync(companyPath(f.dataDir, COMPANY.A));
    mkdirSync(companyPath(f.dataDir, COMPANY.A));
    const response = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
    expectProblem(response, 'listSites', 503, 'service_unavailable');
    await app.close();
  });
});

describe('files the api cannot serve', () => {
  test('a company file with a newer schema → 503 service_unavailable for that company only', async () => {
    const f = fixture();
    setUserVersion(companyPath(f.dataDir, COMPANY.B), 99);
    const app = await testApp(f.dataDir);
    expectProblem(
      await app.inject({ url: '/v1/sites', headers: bearer(f.keys.b) }),
      'listSites',
      503,
      'service_unavailable',
    );
    expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(200);
    await app.close();
  });

  test('a company file whose stored documents are of another representation → 503 for that company only', async () => {
    const f = fixture();
    const db = openWriter(companyPath(f.dataDir, COMPANY.B));
    db.exec('UPDATE meta SET representation = 0'); // not re-rendered yet by this ingest version
    db.close();
    const app = await testApp(f.dataDir);
    expectProblem(
      await app.inject({ url: '/v1/sites', headers: bearer(f.keys.b) }),
      'listSites',
      503,
      'service_unavailable',
    );
    expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    await app.close();
  });

  test('a control file with a newer schema → 503 for keyed requests, health down', async () => {
    const f = fixture();
    setUserVersion(controlPath(f.dataDir), 99);
    const app = await testApp(f.dataDir);
    expectProblem(
      await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) }),
      'getMe',
      503,
      'service_unavailable',
    );
    const health = await app.inject({ url: '/v1/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json().checks.projections).toBe('down');
    await app.close();
  });

  test('a missing company file → 503, not an empty answer', async () => {
    const f = fixture();
    unlinkSync(companyPath(f.dataDir, COMPANY.B));
    const app = await testApp(f.dataDir);
    expectProblem(
      await app.inject({ url: '/v1/sites', headers: bearer(f.keys.b) }),
      'listSites',
      503,
      'service_unavailable',
    );
    await app.close();
  });

  test('an api opened before the files exist starts serving once they appear', async () => {
    const f = fixture();
    const hidden = `${f.dataDir}.hidden`;
    renameSync(f.dataDir, hidden);
    const app = await testApp(f.dataDir);
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(503);
    renameSync(hidden, f.dataDir);
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    await app.close();
  });
});

describe('damaged company files', () => {
  const sites = (app: Awaited<ReturnType<typeof testApp>>, key: string) =>
    app.inject({ url: '/v1/sites', headers: bearer(key) });

  test('a company in company_faults gets a 503 problem, the others are served, and it is served again once removed', async () => {
    const f = fixture();
    const app = await testApp(f.dataDir);
    expect((await sites(app, f.keys.a)).statusCode).toBe(200);
    const control = openWriter(controlPath(f.dataDir));
    control
      .prepare(
        "INSERT INTO company_faults (company_id, state, reason, detected_at_ms) VALUES (?, 'rebuilding', 'rebuild requested', 1)",
      )
      .run(COMPANY.A);
    const refused = await sites(app, f.keys.a);
    expectProblem(refused, 'listSites', 503, 'service_unavailable');
    expect(refused.json().detail).toBe("This company's data is being rebuilt; retry shortly.");
    expect((await sites(app, f.keys.b)).statusCode).toBe(200);
    control.prepare('DELETE FROM company_faults').run();
    control.close();
    const back = await sites(app, f.keys.a);
    expect(back.statusCode).toBe(200);
    expect(back.json().data.map((r: { id: string }) => r.id)).toEqual(f.ids.A.sites);
    await app.close();
  });

  test("a file deleted under an open handle is a 503, never the deleted file's rows; a new file is served", async () => {
    const f = fixture();
    const app = await testApp(f.dataDir);
    expect((await sites(app, f.keys.a)).statusCode).toBe(200);
    const path = companyPath(f.dataDir, COMPANY.A);
    renameSync(path, `${path}.aside`);
    expectProblem(await sites(app, f.keys.a), 'listSites', 503, 'service_unavailable');
    expect((await sites(app, f.keys.b)).statusCode).toBe(200);
    renameSync(`${path}.aside`, path); // "rebuilt": another inode than the handle closed above
    expect((await sites(app, f.keys.a)).statusCode).toBe(200);
    await app.close();
  });

  test('a file overwritten in place (same inode) is a 503 problem, never a 500', async () => {
    const f = fixture();
    const app = await testApp(f.dataDir);
    expect((await sites(app, f.keys.a)).statusCode).toBe(200);
    const path = companyPath(f.dataDir, COMPANY.A);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(statSync(path).size, 0x5a), 0, statSync(path).size, 0);
    closeSync(fd);
    for (let i = 0; i < 3; i++)
      expectProblem(await sites(app, f.keys.a), 'listSites', 503, 'service_unavailable');
    expect((await sites(app, f.keys.b)).statusCode).toBe(200);
    await app.close();
  });
});
