import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { companyPath } from '@pda/projections/model';
import { buildProjection, makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter } from '@pda/projections/write';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectConforms } from './support/conformance.ts';
import { COMPANY, keyGrant, uuid } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// Sync tokens and free polls (docs/public-data-api-v1.md, "Sync tokens", "Conditional requests"):
// the last page of a walk hands out a token; a call with it lists exactly the changes committed
// after the walk's first page read its snapshot, whatever the partner's clock says.

const KEY = 'svc_pk_synctokensynctoken000001';
const OTHER_KEY = 'svc_pk_synctokensynctoken000002';
const B_KEY = 'svc_pk_synctokensynctoken000003';
const T1 = Date.parse('2026-03-01T10:00:00Z');
const id = (n: number) => uuid(0x5, n);
const SITES = [1, 2, 3, 4, 5].map(id);
const scopes = [
  'sites:read',
  'services:read',
  'equipment:read',
  'equipment-categories:read',
  'consumables:read',
];

let dataDir: string;
let app: FastifyInstance;
let lsn = 1;
let clockMs = T1;

function keyRows(key: string, keyN: number, company: string) {
  return keyGrant({ key, id: uuid(0xe, keyN), companies: [company], scopes }, () => lsn++);
}

/** One batch applied by the writer at the next second (change times follow commit order). */
function commit(changes: Parameters<typeof buildProjection>[1], dir = dataDir): void {
  clockMs += 1000;
  const at = clockMs;
  buildProjection(dir, changes, { clockUs: () => at * 1000 });
}

const site = (n: string, extra: Record<string, unknown> = {}) =>
  makeUpsert('sites', sampleRow('sites', { id: n, company_id: COMPANY.A, ...extra }), lsn++);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-api-sync-'));
  commit([
    makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), lsn++),
    makeUpsert('companies', sampleRow('companies', { id: COMPANY.B }), lsn++),
    ...keyRows(KEY, 1, COMPANY.A),
    ...keyRows(OTHER_KEY, 2, COMPANY.A),
    ...keyRows(B_KEY, 3, COMPANY.B),
    ...SITES.map((n) => site(n)),
    makeUpsert('sites', sampleRow('sites', { id: id(50), company_id: COMPANY.B }), lsn++),
  ]);
  app = await testApp(dataDir);
});

afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function get(url: string, headers: Record<string, string> = {}, key = KEY, on = app) {
  return on.inject({ url: url.replace(TEST_BASE_URL, ''), headers: { ...bearer(key), ...headers } });
}

/** Follows links.next from `url` to the end; the ids seen and the last page's body. */
async function walk(url: string, key = KEY, on = app) {
  const ids: string[] = [];
  let next: string | null = url;
  // biome-ignore lint/suspicious/noExplicitAny: a page body, read by the assertions
  let last: Record<string, any> = {};
  for (let pages = 0; next !== null; pages++) {
    const response = await get(next, {}, key, on);
    expect(response.statusCode, response.body).toBe(200);
    last = response.json();
    ids.push(...last.data.map((row: { id: string }) => row.id));
    if (pages === 0 || last.links.next === null) {
      // Only the last page carries the sync token.
      expect(last.meta.sync !== undefined).toBe(last.links.next === null);
    }
    next = last.links.next;
  }
  return { ids, last };
}

describe('the sync token of a walk', () => {
  test('only the last page carries it, with links.sync; a call with it lists exactly what changed since', async () => {
    const full = await walk('/v1/sites?limit=2');
    expect(full.ids).toEqual([...SITES].sort());
    const { token, as_of } = full.last.meta.sync;
    expect(as_of).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(full.last.links.sync).toBe(`${TEST_BASE_URL}/v1/sites?limit=2&sync=${token}`);

    // Nothing changed: an empty walk, and a token for the same point.
    const quiet = await walk(full.last.links.sync);
    expect(quiet.ids).toEqual([]);
    expect(quiet.last.meta.sync.as_of).toBe(as_of);

    commit([site(SITES[1]!, { name: 'renamed' }), makeDelete('sites', { id: SITES[3]! }, lsn++)]);
    const delta = await walk(full.last.links.sync);
    expect(delta.ids).toEqual([SITES[1]]);
    expect(delta.last.meta.sync.as_of > as_of).toBe(true);
    // And the new token lists nothing more until the next commit.
    expect((await walk(delta.last.links.sync)).ids).toEqual([]);
  });

  test('a change committed during a walk comes with the next token call, whichever page it fell on', async () => {
    const first = (await get('/v1/sites?limit=1')).json();
    commit([site(SITES[0]!, { name: 'changed during the walk' })]); // behind the walk's position
    const rest = await walk(first.links.next);
    const next = await walk(rest.last.links.sync);
    expect(next.ids).toEqual([SITES[0]]);
  });

  test('sort, include and fields are carried; the cursor of a token walk is bound to it', async () => {
    commit([site(SITES[2]!, { name: 'a' }), site(SITES[4]!, { name: 'b' })]);
    const before = await walk('/v1/sites?sort=-name&fields[sites]=name');
    commit([site(SITES[2]!, { name: 'c' }), site(SITES[4]!, { name: 'd' })]);
    const url = new URL(before.last.links.sync);
    expect(url.searchParams.get('sort')).toBe('-name');
    expect(url.searchParams.get('fields[sites]')).toBe('name');
    const page = (await get(`${url.pathname}${url.search}&limit=1`.replace('&limit=50', ''))).json();
    expect(page.data).toEqual([{ id: SITES[4], name: 'd' }]);
    const cursor = new URL(page.links.next).searchParams.get('cursor')!;
    const mismatched = await get(`/v1/sites?sort=-name&limit=1&cursor=${cursor}`);
    expect(mismatched.statusCode).toBe(400);
    expect(mismatched.json().code).toBe('invalid_cursor');
  });

  test('the deletions feed hands out its own token, bound to the types it listed', async () => {
    // Without a time: every deletion kept (the file's first minute is within the 60 s overlap).
    const first = await walk('/v1/deletions?filter[type]=sites');
    expect(first.ids).toEqual([SITES[3]]);
    expect(new URL(first.last.links.sync).searchParams.get('filter[type]')).toBeNull();
    commit([makeDelete('sites', { id: SITES[4]! }, lsn++)]);
    const next = await walk(first.last.links.sync);
    expect(next.ids).toEqual([SITES[4]]);
    expect(next.last.data[0].type).toBe('sites');

    const withType = await get(
      `${new URL(first.last.links.sync).search}&filter[type]=sites`.replace(/^\?/, '/v1/deletions?'),
    );
    expect(withType.statusCode).toBe(400);
    expect(withType.json().errors[0].parameter).toBe('sync');
  });

  test('the pages conform to the contract', async () => {
    const response = await get('/v1/sites?limit=200');
    expectConforms(response, 'listSites');
    const token = response.json().meta.sync.token;
    expectConforms(await get(`/v1/sites?sync=${token}`), 'listSites');
    const deletions = await get('/v1/deletions');
    expectConforms(deletions, 'listDeletions');
    expectConforms(await get(`/v1/deletions?sync=${deletions.json().meta.sync.token}`), 'listDeletions');
  });
});

describe('refused tokens', () => {
  const tokenOf = async (url: string, key = KEY) => (await walk(url, key)).last.meta.sync.token as string;

  test('tampered, for another collection or company: 400 invalid_cursor naming sync', async () => {
    const token = await tokenOf('/v1/sites?limit=200');
    const [body, signature] = token.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...payload, w: '0' })).toString('base64url')}.${signature}`;
    for (const url of [
      `/v1/sites?sync=${forged}`,
      `/v1/services?sync=${token}`,
      `/v1/deletions?sync=${token}`,
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json().code).toBe('invalid_cursor');
      expect(response.json().errors[0].parameter).toBe('sync');
    }
    const otherCompany = await get(`/v1/sites?sync=${token}`, {}, B_KEY);
    expect(otherCompany.statusCode).toBe(400);
  });

  test('with filter[updated_since]: 400 invalid_parameter', async () => {
    const token = await tokenOf('/v1/sites?limit=200');
    const response = await get(`/v1/sites?sync=${token}&filter[updated_since]=2026-01-01T00:00:00Z`);
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('invalid_parameter');
  });

  test('older than the kept deletions: 410 sync_window_expired', async () => {
    const token = await tokenOf('/v1/sites?limit=200');
    const deletions = await tokenOf('/v1/deletions');
    const db = openWriter(companyPath(dataDir, COMPANY.A));
    const before = db.prepare('SELECT tombstones_since_us FROM meta').pluck().get() as number;
    db.prepare('UPDATE meta SET tombstones_since_us = last_changed_us + 10').run();
    try {
      for (const url of [`/v1/sites?sync=${token}`, `/v1/deletions?sync=${deletions}`]) {
        const response = await get(url);
        expect(response.statusCode, url).toBe(410);
        expect(response.json().code).toBe('sync_window_expired');
      }
    } finally {
      db.prepare('UPDATE meta SET tombstones_since_us = ?').run(before);
      db.close();
    }
  });

  test('a token whose watermark is just below the kept deletions still works (W + 1 = the horizon)', async () => {
    const token = await tokenOf('/v1/sites?limit=200');
    const watermarkUs = Number(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).w);
    const db = openWriter(companyPath(dataDir, COMPANY.A));
    const before = db.prepare('SELECT tombstones_since_us FROM meta').pluck().get() as number;
    try {
      db.prepare('UPDATE meta SET tombstones_since_us = ?').run(watermarkUs + 1);
      expect((await get(`/v1/sites?sync=${token}`)).statusCode).toBe(200);
      db.prepare('UPDATE meta SET tombstones_since_us = ?').run(watermarkUs + 2);
      expect((await get(`/v1/sites?sync=${token}`)).statusCode).toBe(410);
    } finally {
      db.prepare('UPDATE meta SET tombstones_since_us = ?').run(before);
      db.close();
    }
  });

  test('issued on another generation of the data (a rebuild): 410 sync_window_expired', async () => {
    const token = await tokenOf('/v1/sites?limit=200');
    const rebuiltDir = mkdtempSync(join(tmpdir(), 'pda-api-sync-rebuilt-'));
    const rebuilt = await (async () => {
      clockMs += 1000;
      const at = clockMs;
      buildProjection(
        rebuiltDir,
        [
          makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), 1),
          ...keyRows(KEY, 1, COMPANY.A),
          ...SITES.map((n) => site(n)),
        ],
        { clockUs: () => at * 1000 },
      );
      return testApp(rebuiltDir);
    })();
    try {
      const response = await get(`/v1/sites?sync=${token}`, {}, KEY, rebuilt);
      expect(response.statusCode).toBe(410);
      expect(response.json().detail).toContain('rebuilt');
      // The way back: a full export on the new generation hands out a token that works.
      const fresh = await walk('/v1/sites?limit=200', KEY, rebuilt);
      expect((await walk(fresh.last.links.sync, KEY, rebuilt)).ids).toEqual([]);
    } finally {
      await rebuilt.close();
      rmSync(rebuiltDir, { recursive: true, force: true });
    }
  });
});

describe('a brand-new company', () => {
  test('the tokens of its full export work at once, deletions included (no window to wait for)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pda-api-sync-new-'));
    const at = Date.now();
    buildProjection(
      dir,
      [
        makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), 1),
        ...keyRows(KEY, 1, COMPANY.A),
        makeUpsert('sites', sampleRow('sites', { id: SITES[0]!, company_id: COMPANY.A }), lsn++),
      ],
      { clockUs: () => at * 1000 },
    );
    const fresh = await testApp(dir);
    try {
      // A time within the file's first minute reaches before it (the 60 s overlap): 410 ...
      const byTime = await get(
        `/v1/deletions?filter[deleted_since]=${new Date(at).toISOString()}`,
        {},
        KEY,
        fresh,
      );
      expect(byTime.statusCode).toBe(410);
      // ... while the full export's walks (the deletions feed without a time) hand out tokens that work.
      const sites = await walk('/v1/sites', KEY, fresh);
      const deletions = await walk('/v1/deletions', KEY, fresh);
      expect(deletions.ids).toEqual([]);
      expect((await walk(sites.last.links.sync, KEY, fresh)).ids).toEqual([]);
      expect((await walk(deletions.last.links.sync, KEY, fresh)).ids).toEqual([]);
    } finally {
      await fresh.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** RateLimit-Remaining as a number; fails when the header is absent (NaN would equal NaN). */
function rateLimitRemaining(response: { headers: Record<string, unknown> }): number {
  const header = response.headers['ratelimit-remaining'];
  expect(header, 'RateLimit-Remaining').toMatch(/^\d+$/);
  return Number(header);
}

describe('conditional polls (If-None-Match)', () => {
  const remaining = rateLimitRemaining;

  test('nothing changed: 304 without a body, no budget spent; a commit: 200 with a new ETag', async () => {
    const token = (await walk('/v1/sites?limit=200')).last.meta.sync.token as string;
    const url = `/v1/sites?sync=${token}`;
    const first = await get(url);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toBe('private, no-store');
    expect(first.headers.vary).toContain('Authorization');
    expect(first.headers.vary).toContain('X-Service-Company');

    const polls = [];
    for (let n = 0; n < 3; n++) polls.push(await get(url, { 'if-none-match': etag }));
    for (const poll of polls) {
      expect(poll.statusCode).toBe(304);
      expect(poll.body).toBe('');
      expect(poll.headers.etag).toBe(etag);
      expect(poll.headers['cache-control']).toBe('private, no-store');
    }
    // The budget: every poll leaves RateLimit-Remaining where the 200 before them left it.
    expect(polls.map(remaining)).toEqual([remaining(first), remaining(first), remaining(first)]);
    expect(remaining(await get('/v1/me'))).toBe(remaining(first) - 1);

    commit([site(SITES[0]!, { name: 'changed after the poll' })]);
    const changed = await get(url, { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().data.map((row: { id: string }) => row.id)).toEqual([SITES[0]]);
  });

  test('since-walks and the deletions feed poll the same way; later pages carry no ETag', async () => {
    const since = `/v1/sites?limit=1&filter[updated_since]=${new Date(T1).toISOString()}`;
    const first = await get(since);
    expect((await get(since, { 'if-none-match': first.headers.etag as string })).statusCode).toBe(304);
    const second = await get(first.json().links.next);
    expect(second.headers.etag).toBeUndefined();
    const deletions = '/v1/deletions?filter[type]=sites';
    const feed = await get(deletions);
    expect((await get(deletions, { 'if-none-match': feed.headers.etag as string })).statusCode).toBe(304);
    // A plain first page (no time, no token) is not a poll: no ETag.
    expect((await get('/v1/sites')).headers.etag).toBeUndefined();
  });

  test('an ETag never matches for another key, company or query', async () => {
    const url = `/v1/sites?filter[updated_since]=${new Date(T1).toISOString()}`;
    const etag = (await get(url)).headers.etag as string;
    expect((await get(url, { 'if-none-match': etag }, OTHER_KEY)).statusCode).toBe(200);
    expect((await get(url, { 'if-none-match': etag }, B_KEY)).statusCode).toBe(200);
    expect((await get(`${url}&limit=3`, { 'if-none-match': etag })).statusCode).toBe(200);
    expect((await get(url, { 'if-none-match': `"x", ${etag}` })).statusCode).toBe(304);
  });
});

describe('conditional polls are free within a bound', () => {
  const remaining = rateLimitRemaining;
  const url = `/v1/sites?filter[updated_since]=${new Date(T1).toISOString()}`;

  test('If-None-Match: * matches no page: the page itself, and it costs a request', async () => {
    const first = await get(url);
    for (const header of ['*', ' * ', `"x", *`]) {
      const star = await get(url, { 'if-none-match': header });
      expect(star.statusCode, header).toBe(200);
      expect(star.json().data.length).toBeGreaterThan(0);
      expect(star.headers.etag).toBe(first.headers.etag);
    }
    expect(remaining(await get('/v1/me'))).toBe(remaining(first) - 4);
  });

  test('API_NOT_MODIFIED_FREE_PER_WINDOW 304s per window are given back; later ones spend the budget, then 429', async () => {
    const MAX = 5;
    const FREE = 3;
    const bounded = await testApp(dataDir, {
      env: { API_RATE_LIMIT_MAX: String(MAX), API_NOT_MODIFIED_FREE_PER_WINDOW: String(FREE) },
    });
    try {
      const first = await get(url, {}, KEY, bounded);
      expect(remaining(first)).toBe(MAX - 1);
      const etag = first.headers.etag as string;
      const statuses: number[] = [];
      const left: number[] = [];
      // 200 polls that find nothing (the case: they all kept RateLimit-Remaining at 5).
      for (let n = 0; n < 200; n++) {
        const poll = await get(url, { 'if-none-match': etag }, KEY, bounded);
        statuses.push(poll.statusCode);
        left.push(remaining(poll));
      }
      // FREE free polls, then the MAX - 1 requests left, then refused.
      expect(statuses.slice(0, FREE + MAX - 1)).toEqual(Array(FREE + MAX - 1).fill(304));
      expect(left.slice(0, FREE + MAX - 1)).toEqual([4, 4, 4, 3, 2, 1, 0]);
      expect(new Set(statuses.slice(FREE + MAX - 1))).toEqual(new Set([429]));
    } finally {
      await bounded.close();
    }
  });

  test('0: no 304 is free', async () => {
    const bounded = await testApp(dataDir, { env: { API_NOT_MODIFIED_FREE_PER_WINDOW: '0' } });
    try {
      const first = await get(url, {}, KEY, bounded);
      const poll = await get(url, { 'if-none-match': first.headers.etag as string }, KEY, bounded);
      expect(poll.statusCode).toBe(304);
      expect(remaining(poll)).toBe(remaining(first) - 1);
    } finally {
      await bounded.close();
    }
  });
});

describe('Data-Current-As-Of', () => {
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

  test('every authenticated answer says up to when the data is current, its problems and 304s included', async () => {
    const url = `/v1/sites?filter[updated_since]=${new Date(T1).toISOString()}`;
    const etag = (await get(url)).headers.etag as string;
    for (const [path, headers, status] of [
      ['/v1/sites', {}, 200],
      ['/v1/me', {}, 200],
      [`/v1/sites/${uuid(0x5, 99)}`, {}, 404],
      ['/v1/sites?nope=1', {}, 400],
      ['/v1/sites?cursor=abc', {}, 400],
      [url, { 'if-none-match': etag }, 304],
    ] as const) {
      const response = await get(path, headers);
      expect(response.statusCode, path).toBe(status);
      expect(String(response.headers['data-current-as-of']), path).toMatch(ISO);
    }
  });

  // Between heartbeats the time moves when any tenant commits: an anonymous caller must not watch it.
  test('no answer without an accepted key carries it: health, version, 401, unknown paths, 405', async () => {
    const answers = [
      [await app.inject({ url: '/v1/health' }), 200],
      [await app.inject({ url: '/v1/version' }), 200],
      [await app.inject({ url: '/v1/sites' }), 401],
      [await app.inject({ url: '/v1/sites', headers: bearer('svc_pk_nosuchkeynosuchkey0000000') }), 401],
      [await app.inject({ url: '/v1/nope', headers: bearer(KEY) }), 404],
      [await app.inject({ method: 'DELETE', url: '/v1/sites', headers: bearer(KEY) }), 405],
    ] as const;
    for (const [response, status] of answers) {
      expect(response.statusCode, response.raw.req.url).toBe(status);
      expect(response.headers['data-current-as-of'], response.raw.req.url).toBeUndefined();
    }
  });
});
