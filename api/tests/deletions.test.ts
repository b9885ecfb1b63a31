import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { companyPath } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isoMicros } from '../src/resources/iso-micros.ts';
import { expectConforms, expectProblem } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// GET /v1/deletions (docs/public-data-api-v1.md, "Deletions"): the tombstones of a company file
// as a collection with the rules of every collection, the same change time and overlap as
// filter[updated_since], a read scope per type, and 410 sync_window_expired before the retention
// horizon. `t0` is a minute after the fixture's files were created (a new file vouches for its
// deletions from its creation on, and the 60 s overlap is subtracted from filter[deleted_since]);
// the deletes are applied with a clock 10 and 20 minutes after t0, so every expected time is known.

const MINUTE = 60_000;
let f: Fixture;
let app: FastifyInstance;
let t0: number;
let d1: number; // ms: first batch of deletes
let d2: number; // ms: second batch
const OP = 'listDeletions';

beforeAll(async () => {
  f = createFixture();
  t0 = Date.now() + MINUTE;
  d1 = t0 + 10 * MINUTE;
  d2 = t0 + 20 * MINUTE;
  const A = f.ids.A;
  let lsn = 10_000;
  const deleteBatch = (at: number, changes: Parameters<ProjectionStore['applyBatch']>[0]) => {
    const store = ProjectionStore.open({ dataDir: f.dataDir, clockUs: () => at * 1000 });
    store.applyBatch(changes);
    store.close();
  };
  deleteBatch(d1, [
    makeDelete('sites', { id: A.sites[0]! }, lsn++),
    makeDelete('services', { id: A.services[0]! }, lsn++),
    makeDelete('equipment_categories', { id: A.categories[0]! }, lsn++),
    makeDelete('services', { id: f.ids.B.services[0]! }, lsn++),
  ]);
  deleteBatch(d2, [
    makeDelete('equipment', { id: A.equipment[1]! }, lsn++),
    makeDelete('consumables', { id: A.consumables[0]! }, lsn++),
    // Not an exported resource: its site changes instead (filter[updated_since]).
    makeDelete('site_contacts', { id: A.contacts[2]! }, lsn++),
    // Moves from A to B: a deletion for A, a new record for B.
    makeUpsert('sites', sampleRow('sites', { id: A.sites[2]!, company_id: COMPANY.B }), lsn++, { op: 'u' }),
  ]);
  app = await testApp(f.dataDir);
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

/** A copy of the fixture's files, for tests that change them (the others keep every tombstone). */
function copyOfFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pda-api-deletions-'));
  cpSync(f.dataDir, dir, { recursive: true });
  return dir;
}

const iso = (ms: number) => new Date(ms).toISOString();
const get = (url: string, key: string = f.keys.a, headers: Record<string, string> = {}) =>
  app.inject({ url, headers: { ...bearer(key), ...headers } });
const since = (ms: number, extra = '') => `/v1/deletions?filter[deleted_since]=${iso(ms)}${extra}`;
const entries = (body: { data: { type: string; id: string }[] }) =>
  body.data.map((row) => `${row.type}/${row.id}`);

describe('GET /v1/deletions', () => {
  test('lists the deletions of every type the key may read, oldest first, as { type, id, deleted_at }', async () => {
    const response = await get(since(t0));
    expect(response.statusCode, response.body).toBe(200);
    expectConforms(response, OP);
    const body = response.json();
    const A = f.ids.A;
    expect(entries(body)).toEqual([
      `sites/${A.sites[0]}`,
      `services/${A.services[0]}`,
      `equipment-categories/${A.categories[0]}`,
      `equipment/${A.equipment[1]}`,
      `consumables/${A.consumables[0]}`,
      `sites/${A.sites[2]}`, // moved to company B: deleted for A
    ]);
    expect(body.data[0]).toEqual({ type: 'sites', id: A.sites[0], deleted_at: isoMicros(d1 * 1000) });
    expect(body.data[0].deleted_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(body.data[3].deleted_at >= iso(d2).replace('Z', '000Z')).toBe(true);
    expect(body.meta).toEqual({
      page: { limit: 50, has_more: false },
      sync: { token: expect.any(String), as_of: expect.any(String) },
    });
    expect(body.links).toEqual({
      self: `${TEST_BASE_URL}/v1/deletions?filter%5Bdeleted_since%5D=${encodeURIComponent(iso(t0))}&limit=50`,
      next: null,
      prev: null,
      sync: `${TEST_BASE_URL}/v1/deletions?limit=50&sync=${body.meta.sync.token}`,
    });
  });

  test('same change time and overlap as filter[updated_since]: 60 s before the time still counts', async () => {
    const A = f.ids.A;
    const later = entries((await get(since(d2 - 1))).json());
    expect(later).toEqual([
      `equipment/${A.equipment[1]}`,
      `consumables/${A.consumables[0]}`,
      `sites/${A.sites[2]}`,
    ]);
    expect(entries((await get(since(d2 + 59_000))).json())).toEqual(later);
    expect(entries((await get(since(d2 + 61_000))).json())).toEqual([]);
  });

  test('filter[type] narrows the list; the order of the names does not matter', async () => {
    const A = f.ids.A;
    const one = (await get(since(t0, '&filter[type]=sites,services'))).json();
    const other = (await get(since(t0, '&filter[type]=services,sites,sites'))).json();
    expect(entries(one)).toEqual([`sites/${A.sites[0]}`, `services/${A.services[0]}`, `sites/${A.sites[2]}`]);
    expect(entries(other)).toEqual(entries(one));
  });

  test('each company sees only its own deletions; a multi-company key selects with X-Service-Company', async () => {
    const B = f.ids.B;
    expect(entries((await get(since(t0), f.keys.b)).json())).toEqual([`services/${B.services[0]}`]);
    const multi = await get(since(t0), f.keys.multi, { 'x-service-company': COMPANY.B });
    expect(entries(multi.json())).toEqual([`services/${B.services[0]}`]);
    expectProblem(await get(since(t0), f.keys.multi), OP, 400, 'company_selection_required');
  });

  test('the moved record is a new record for the company that gained it', async () => {
    const response = await get(`/v1/sites?filter[updated_since]=${iso(d2)}`, f.keys.b);
    expect(response.json().data.map((row: { id: string }) => row.id)).toEqual([f.ids.A.sites[2]]);
  });
});

describe('scopes', () => {
  test('without filter[type] only the types the key may read are listed', async () => {
    const body = (await get(since(t0), f.keys.noCategories)).json();
    expect(entries(body)).not.toContain(`equipment-categories/${f.ids.A.categories[0]}`);
    expect(entries(body)).toHaveLength(5);
  });

  test('naming a type whose scope the key lacks: 403 insufficient_scope naming the scope', async () => {
    const response = await get(since(t0, '&filter[type]=sites,equipment-categories'), f.keys.noCategories);
    expectProblem(response, OP, 403, 'insufficient_scope');
    expect(response.json().detail).toContain('equipment-categories:read');
    expect(response.headers['ratelimit-remaining']).toBeDefined();
  });

  test('a key with no read scope at all: 403 insufficient_scope', async () => {
    expectProblem(await get(since(t0), f.keys.noScopes), OP, 403, 'insufficient_scope');
  });

  test('bearer key required: 401 without one', async () => {
    const response = await app.inject({ url: since(t0) });
    expectProblem(response, OP, 401, 'unauthenticated');
  });
});

describe('paging', () => {
  async function walk(url: string, key = f.keys.a): Promise<{ ids: string[]; pages: unknown[] }> {
    const ids: string[] = [];
    const pages: unknown[] = [];
    let next: string | null = url;
    while (next) {
      const response = await get(next.replace(TEST_BASE_URL, ''), key);
      expect(response.statusCode, response.body).toBe(200);
      expectConforms(response, OP);
      const body = response.json();
      pages.push(body);
      ids.push(...entries(body));
      next = body.links.next;
    }
    return { ids, pages };
  }

  test('links.next walks every deletion once, links.prev goes back', async () => {
    const all = entries((await get(since(t0))).json());
    const { ids, pages } = await walk(since(t0, '&limit=2'));
    expect(ids).toEqual(all);
    expect(pages).toHaveLength(3);
    const second = pages[1] as { links: { prev: string } };
    const back = (await get(second.links.prev.replace(TEST_BASE_URL, ''))).json();
    expect(entries(back)).toEqual(all.slice(0, 2));
    expect(back.links.prev).toBeNull();
    expect(back.links.next).not.toBeNull();
  });

  test('the cursor is bound to the query: another time, other types, another company → 400 invalid_cursor', async () => {
    const first = (await get(since(t0, '&limit=1&filter[type]=sites,services'))).json();
    const cursor = new URL(first.links.next).searchParams.get('cursor')!;
    const ok = await get(since(t0, `&filter[type]=services,sites&cursor=${cursor}`));
    expect(ok.statusCode, ok.body).toBe(200);
    for (const url of [
      since(t0 + 1, `&filter[type]=sites,services&cursor=${cursor}`),
      since(t0, `&filter[type]=sites&cursor=${cursor}`),
      since(t0, `&cursor=${cursor}`),
    ]) {
      expectProblem(await get(url), OP, 400, 'invalid_cursor');
    }
    expectProblem(
      await get(since(t0, `&filter[type]=sites,services&cursor=${cursor}`), f.keys.b),
      OP,
      400,
      'invalid_cursor',
    );
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    expectProblem(await get(since(t0, `&cursor=${tampered}`)), OP, 400, 'invalid_cursor');
    // A list endpoint's cursor is not a deletions cursor.
    const equipment = (await get('/v1/equipment?limit=1')).json();
    const listCursor = new URL(equipment.links.next).searchParams.get('cursor')!;
    expectProblem(await get(since(t0, `&cursor=${listCursor}`)), OP, 400, 'invalid_cursor');
  });

  test('limit is clamped like every collection', async () => {
    expect((await get(since(t0, '&limit=1000'))).json().meta.page.limit).toBe(200);
    const one = (await get(since(t0, '&limit=0'))).json();
    expect(one.meta.page).toEqual({ limit: 1, has_more: true });
    expect(one.data).toHaveLength(1);
  });
});

describe('parameters', () => {
  test('filter[deleted_since] must be an RFC 3339 date-time', async () => {
    for (const url of [
      '/v1/deletions?filter[deleted_since]=yesterday',
      '/v1/deletions?filter[deleted_since]=2026-01-01',
    ]) {
      const response = await get(url);
      expectProblem(response, OP, 400, 'invalid_parameter');
      expect(response.json().errors[0].parameter).toBe('filter[deleted_since]');
    }
  });

  test('unknown types, repeated or unknown parameters: 400 invalid_parameter', async () => {
    for (const extra of [
      '&filter[type]=contacts',
      '&filter[type]=',
      '&sort=id',
      '&filter[updated_since]=x',
    ]) {
      expectProblem(await get(since(t0, extra)), OP, 400, 'invalid_parameter');
    }
    expectProblem(await get(`${since(t0)}&${since(t0).split('?')[1]}`), OP, 400, 'invalid_parameter');
  });
});

describe('retention: 410 sync_window_expired', () => {
  test('a time before the company file vouches for its deletions (its creation) → 410', async () => {
    const response = await get(since(t0 - 10 * MINUTE));
    expectProblem(response, OP, 410, 'sync_window_expired');
    expect(response.json().detail).toMatch(/full export/);
  });

  test('after ingest prunes, a time before the new horizon → 410; after it → the deletions kept', async () => {
    const dir = copyOfFixture();
    // 30 min after the build, with a 15 min window: the cutoff is between the two batches.
    const store = ProjectionStore.open({ dataDir: dir, clockUs: () => (t0 + 30 * MINUTE) * 1000 });
    let cursor: Parameters<ProjectionStore['pruneTombstones']>[1];
    do {
      cursor =
        store.pruneTombstones({ retentionUs: 15 * MINUTE * 1000, maxRows: 2, maxFiles: 10 }, cursor).next ??
        undefined;
    } while (cursor);
    store.close();
    const pruned = await testApp(dir);
    try {
      const before = await pruned.inject({ url: since(d1), headers: bearer(f.keys.a) });
      expectProblem(before, OP, 410, 'sync_window_expired');
      const after = await pruned.inject({ url: since(t0 + 16 * MINUTE), headers: bearer(f.keys.a) });
      expect(after.statusCode, after.body).toBe(200);
      expect(entries(after.json())).toEqual(entries((await get(since(t0 + 16 * MINUTE))).json()));
      expect(after.json().data).toHaveLength(3);
    } finally {
      await pruned.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the retention horizon itself', () => {
  test('a time exactly at the horizon is answered; a millisecond before it is 410', async () => {
    const dir = copyOfFixture();
    const horizonMs = t0 + 15 * MINUTE;
    const db = openWriter(companyPath(dir, COMPANY.A));
    db.prepare('UPDATE meta SET tombstones_since_us = ?').run(horizonMs * 1000);
    db.close();
    const exact = await testApp(dir, { env: { API_UPDATED_SINCE_OVERLAP_MS: '0' } });
    try {
      const at = await exact.inject({ url: since(horizonMs), headers: bearer(f.keys.a) });
      expect(at.statusCode, at.body).toBe(200);
      expect(entries(at.json())).toHaveLength(3); // the second batch, d2 > the horizon
      const before = await exact.inject({ url: since(horizonMs - 1), headers: bearer(f.keys.a) });
      expectProblem(before, OP, 410, 'sync_window_expired');
    } finally {
      await exact.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a prune between two pages of a walk: 410, never an incomplete walk', () => {
  async function prunedBetweenPages(firstUrl: string) {
    const dir = copyOfFixture();
    const walkApp = await testApp(dir);
    try {
      const first = await walkApp.inject({ url: firstUrl, headers: bearer(f.keys.a) });
      expect(first.statusCode, first.body).toBe(200);
      const store = ProjectionStore.open({ dataDir: dir, clockUs: () => (t0 + 30 * MINUTE) * 1000 });
      let cursor: Parameters<ProjectionStore['pruneTombstones']>[1];
      do {
        cursor =
          store.pruneTombstones({ retentionUs: 5 * MINUTE * 1000, maxRows: 2, maxFiles: 10 }, cursor).next ??
          undefined;
      } while (cursor);
      store.close();
      const next = new URL(first.json().links.next);
      return await walkApp.inject({ url: `${next.pathname}${next.search}`, headers: bearer(f.keys.a) });
    } finally {
      await walkApp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test('a walk from a time', async () => {
    expectProblem(await prunedBetweenPages(since(t0, '&limit=1')), OP, 410, 'sync_window_expired');
  });

  test('the walk of every deletion kept (no time)', async () => {
    const second = await prunedBetweenPages('/v1/deletions?limit=1');
    expectProblem(second, OP, 410, 'sync_window_expired');
    expect(second.json().detail).toMatch(/pruned since its previous page/);
  });
});

describe('a removed company', () => {
  test('answers 403 company_not_available, like every endpoint: its file is no longer served', async () => {
    const dir = copyOfFixture();
    const store = ProjectionStore.open({ dataDir: dir });
    store.applyBatch([makeDelete('companies', { id: COMPANY.A }, 50_000)]);
    store.close();
    const removed = await testApp(dir);
    try {
      const response = await removed.inject({ url: since(t0), headers: bearer(f.keys.a) });
      expectProblem(response, OP, 403, 'company_not_available');
    } finally {
      await removed.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
