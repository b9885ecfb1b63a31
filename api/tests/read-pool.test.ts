import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { companyPath, ProjectionError } from '@pda/projections/model';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectionFiles } from '../src/company-files/projection-files.ts';
import { type ListPageInput, readListPage } from '../src/read-pool/list-page-read.ts';
import { ReadPool } from '../src/read-pool/read-pool.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Reader threads (api/src/read-pool/): the same page as the loop reads, fair between keys, and
// errors that keep the class the error handler maps.
let f: Fixture;
const pools: ReadPool[] = [];
const logs: string[] = [];

function pool(threads: number): ReadPool {
  const created = new ReadPool({
    threads,
    thread: { dataDir: f.dataDir, maxOpenCompanies: 4, maxStatementsPerFile: 64, reopenCheckMs: 0 },
    log: (_level, _fields, message) => logs.push(message),
  });
  pools.push(created);
  return created;
}

function sitesPage(companyId: string, limit = 3, fields: string[] | null = null): ListPageInput {
  return {
    companyId,
    resource: 'sites',
    request: { sort: [{ column: 'id', descending: false }], limit, direction: 'after' },
    include: [],
    fields,
  };
}

beforeAll(() => {
  f = createFixture();
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  f.cleanup();
});

describe('reader threads', () => {
  it('read the page the event loop reads, its documents joined into one buffer', async () => {
    const files = new ProjectionFiles(f.dataDir, { maxOpenCompanies: 4, reopenCheckMs: 0, now: Date.now });
    const input = sitesPage(COMPANY.A, 3, ['name']);
    const onLoop = readListPage(files, input);
    files.close();
    const inThread = await pool(1).read('key-a', 'list', input);
    expect(inThread.count).toBe(3);
    expect(Buffer.from(inThread.data).toString('utf8')).toBe(onLoop.items.join(','));
    expect([inThread.first, inThread.last, inThread.hasMore, inThread.state]).toEqual([
      onLoop.first,
      onLoop.last,
      onLoop.hasMore,
      onLoop.state,
    ]);
  });

  it('rebuild a ProjectionError on the loop (a missing company file is a 503 there, not a 500)', async () => {
    const error = await pool(1)
      .read('key-a', 'list', sitesPage('00000000-0000-4000-8000-00000000dead'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProjectionError);
    expect((error as ProjectionError).code).toBeTypeOf('string');
  });

  it('serve keys in turn: a key with many reads waiting does not go before another key', async () => {
    const p = pool(1);
    const order: string[] = [];
    const reads: Promise<unknown>[] = [];
    for (let index = 0; index < 6; index++) {
      reads.push(p.read('hostile', 'list', sitesPage(COMPANY.A, 50)).then(() => order.push('hostile')));
    }
    reads.push(p.read('victim', 'list', sitesPage(COMPANY.B, 1)).then(() => order.push('victim')));
    await Promise.all(reads);
    // The first hostile read took the thread before the victim's arrived; the victim's is next.
    expect(order.indexOf('victim')).toBe(1);
  });

  it('keep one thread for other keys: one key holds at most threads - 1', async () => {
    const p = pool(2);
    const hostile = Array.from({ length: 8 }, () => p.read('hostile', 'list', sitesPage(COMPANY.A, 50)));
    // Both threads idle, eight hostile reads queued: only one runs, the other thread stays free.
    expect(p.waiting).toBe(7);
    const victim = p.read('victim', 'list', sitesPage(COMPANY.B, 1));
    expect(p.waiting).toBe(7);
    await Promise.all([...hostile, victim]);
    expect(p.waiting).toBe(0);
  });

  it('refuse reads once closed', async () => {
    const p = pool(1);
    await p.close();
    await expect(p.read('key-a', 'list', sitesPage(COMPANY.A))).rejects.toThrow('closed');
  });
});

describe('an api with reader threads', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    // One thread: a key's reads queue behind each other (a single thread is all of one key's share).
    app = await testApp(f.dataDir, {
      env: { API_READ_THREADS: '1', API_MAX_IN_PROGRESS_PER_KEY: '8', API_RATE_LIMIT_MAX: '10000' },
    });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers the same pages, links and ETags as an api that reads on the loop', async () => {
    const onLoop = await testApp(f.dataDir, { env: { API_READ_THREADS: '0' } });
    try {
      for (const url of [
        '/v1/sites?limit=2',
        '/v1/sites?limit=2&sort=-created_at&fields[sites]=name',
        '/v1/equipment?include=category&limit=3',
        '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z&limit=2',
        '/v1/changes?limit=3',
        '/v1/changes?limit=2&filter[type]=sites,equipment&include[equipment]=category',
      ]) {
        const [a, b] = await Promise.all(
          [app, onLoop].map((api) => api.inject({ url, headers: bearer(f.keys.a) })),
        );
        expect(a?.statusCode, url).toBe(200);
        expect(a?.body, url).toBe(b?.body);
        expect(a?.headers.etag, url).toBe(b?.headers.etag);
      }
    } finally {
      await onLoop.close();
    }
  });

  it("counts a key's reads waiting for a thread as in progress: a burst of 40 on a cap of 8 refuses some with 429", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        app.inject({ url: '/v1/sites?limit=5', headers: bearer(f.keys.a) }).then((r) => ({
          status: r.statusCode,
          code: r.statusCode === 429 ? r.json().code : undefined,
        })),
      ),
    );
    const served = answers.filter((a) => a.status === 200).length;
    // The first eight are always admitted; by the time the last are admitted, eight are in progress.
    expect(served).toBeGreaterThanOrEqual(8);
    expect(served).toBeLessThan(40);
    expect(answers.filter((a) => a.status !== 200)).toEqual(
      Array.from({ length: 40 - served }, () => ({ status: 429, code: 'too_many_requests_in_progress' })),
    );
  });
});

describe('a company file damaged under a reader thread', () => {
  it('is a 503 problem from the thread, never a 500, and the other companies are served', async () => {
    const damaged = createFixture();
    const app = await testApp(damaged.dataDir, { env: { API_READ_THREADS: '1' } });
    try {
      const sites = (key: string) => app.inject({ url: '/v1/sites', headers: bearer(key) });
      expect((await sites(damaged.keys.a)).statusCode).toBe(200);
      const path = companyPath(damaged.dataDir, COMPANY.A);
      const size = statSync(path).size;
      const fd = openSync(path, 'r+');
      writeSync(fd, Buffer.alloc(size, 0x5a), 0, size, 0);
      closeSync(fd);
      for (let i = 0; i < 3; i++) {
        const response = await sites(damaged.keys.a);
        expect(response.statusCode).toBe(503);
        expect(response.json().code).toBe('service_unavailable');
      }
      expect((await sites(damaged.keys.b)).statusCode).toBe(200);
    } finally {
      await app.close();
      damaged.cleanup();
    }
  });
});
