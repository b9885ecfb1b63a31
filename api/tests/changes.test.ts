import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { companyPath } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { expectConforms, expectProblem } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// GET /v1/changes (docs/public-data-api-v1.md, "Change feed"): the rows and tombstones of the
// listed types merged in (change time, type, id) order, each page's links.next a resume point,
// `wait` held until a commit. Changes are applied to the fixture's files while the api serves
// them, through ProjectionStore as ingest does (wall clock: every change has a later time).

const OP = 'listChanges';
let f: Fixture;
let app: FastifyInstance;
let lsn = 50_000;

interface Item {
  op: 'upsert' | 'delete';
  type: string;
  id: string;
  changed_at: string;
  data?: Record<string, unknown>;
}
interface Page {
  data: Item[];
  meta: { page: { limit: number; has_more: boolean } };
  links: { self: string; next: string };
}

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir);
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

function apply(dataDir: string, changes: Parameters<ProjectionStore['applyBatch']>[0]): void {
  const store = ProjectionStore.open({ dataDir });
  store.applyBatch(changes);
  store.close();
}
const site = (id: string, name: string, company: string = COMPANY.A) =>
  makeUpsert('sites', sampleRow('sites', { id, name, company_id: company }), lsn++, { op: 'u' });
const local = (url: string) => url.replace(TEST_BASE_URL, '');
const get = (url: string, key: string = f.keys.a, on: FastifyInstance = app) =>
  on.inject({ url: local(url), headers: bearer(key) });
const entries = (page: Page) => page.data.map((item) => `${item.op} ${item.type}/${item.id}`);

async function page(url: string, key?: string, on?: FastifyInstance): Promise<Page> {
  const response = await get(url, key, on);
  expect(response.statusCode, response.body).toBe(200);
  expectConforms(response, OP);
  return response.json() as Page;
}

/** Follows links.next until a page is not full; returns every item and the last links.next. */
async function follow(
  url: string,
  key?: string,
  on?: FastifyInstance,
): Promise<{ items: Item[]; next: string; pages: Page[] }> {
  const items: Item[] = [];
  const pages: Page[] = [];
  let next = url;
  for (;;) {
    const body = await page(next, key, on);
    pages.push(body);
    items.push(...body.data);
    next = body.links.next;
    if (!body.meta.page.has_more) return { items, next, pages };
  }
}

function copyOfFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pda-api-changes-'));
  cpSync(f.dataDir, dir, { recursive: true });
  return dir;
}

describe('GET /v1/changes', () => {
  test('from the start: every record of the company once, in change order, data as the item endpoint serves it', async () => {
    const { items, next } = await follow('/v1/changes?limit=4');
    const A = f.ids.A;
    const expected = [
      ...A.sites.map((id) => `upsert sites/${id}`),
      ...A.services.map((id) => `upsert services/${id}`),
      ...A.categories.map((id) => `upsert equipment-categories/${id}`),
      ...A.equipment.map((id) => `upsert equipment/${id}`),
      ...A.consumables.map((id) => `upsert consumables/${id}`),
    ];
    expect(items.map((item) => `${item.op} ${item.type}/${item.id}`).sort()).toEqual([...expected].sort());
    const times = items.map((item) => item.changed_at);
    expect(times).toEqual([...times].sort());
    for (const item of items.slice(0, 3)) {
      const one = await get(`/v1/${item.type}/${item.id}`);
      expect(item.data).toEqual(one.json().data);
    }
    expect(next).toMatch(/^https:\/\/api\.test\.example\/v1\/changes\?filter%5Btype%5D=/);
  });

  test('changes of every type in commit order, deletes inline; resume from any page gives the rest', async () => {
    const { next: start } = await follow('/v1/changes');
    const A = f.ids.A;
    apply(f.dataDir, [
      makeUpsert(
        'services',
        sampleRow('services', { id: A.services[1]!, company_id: COMPANY.A, name: 'renamed' }),
        lsn++,
        { op: 'u' },
      ),
      makeDelete('consumables', { id: A.consumables[1]! }, lsn++),
      site(A.sites[1]!, 'moved on'),
      makeDelete('equipment', { id: A.equipment[0]! }, lsn++),
    ]);
    const { items, pages } = await follow(`${start}`.replace('limit=50', 'limit=1'));
    expect(items.map((item) => `${item.op} ${item.type}/${item.id}`)).toEqual([
      `upsert services/${A.services[1]}`,
      `delete consumables/${A.consumables[1]}`,
      `upsert sites/${A.sites[1]}`,
      `delete equipment/${A.equipment[0]}`,
    ]);
    expect(items[0]!.data).toMatchObject({ id: A.services[1], name: 'renamed' });
    expect(items[1]!.data).toBeUndefined();
    expect(pages).toHaveLength(4); // four pages of one, the last with has_more false
    // Resuming from every page's links.next lists exactly what follows it.
    for (let index = 0; index < pages.length; index++) {
      const rest = await follow(pages[index]!.links.next);
      expect(rest.items.map((item) => item.id)).toEqual(items.slice(index + 1).map((item) => item.id));
    }
    // The caught-up page's links.next is the same position: signed the same.
    const last = pages[pages.length - 1]!;
    expect((await page(last.links.next)).links.next).toBe(last.links.next);
  });

  test('delete then recreate: the delete, then the upsert, in order; both after the position: the upsert only', async () => {
    const { next: start } = await follow('/v1/changes?filter[type]=sites');
    const id = f.ids.A.sites[2]!;
    apply(f.dataDir, [makeDelete('sites', { id }, lsn++)]);
    const afterDelete = await follow(start);
    expect(entries(afterDelete.pages[0]!)).toEqual([`delete sites/${id}`]);
    apply(f.dataDir, [
      makeUpsert('sites', sampleRow('sites', { id, company_id: COMPANY.A, name: 'again' }), lsn++),
    ]);
    expect((await follow(afterDelete.next)).items.map((item) => `${item.op} ${item.data?.name}`)).toEqual([
      'upsert again',
    ]);
    // The tombstone went with the re-create: from before both, the record's current state.
    expect((await follow(start)).items.map((item) => `${item.op} ${item.id}`)).toEqual([`upsert ${id}`]);
  });

  test("a contact change is its site's upsert, with contacts when include[sites]=contacts", async () => {
    const { next: start } = await follow('/v1/changes?filter[type]=sites&include[sites]=contacts');
    const A = f.ids.A;
    apply(f.dataDir, [
      makeUpsert(
        'site_contacts',
        sampleRow('site_contacts', {
          id: A.contacts[0]!,
          company_id: COMPANY.A,
          site_id: A.sites[0]!,
          name: 'Zed',
        }),
        lsn++,
        { op: 'u' },
      ),
    ]);
    const { items } = await follow(start);
    expect(items.map((item) => `${item.op} ${item.id}`)).toEqual([`upsert ${A.sites[0]}`]);
    const item = await get(`/v1/sites/${A.sites[0]}?include=contacts`);
    expect(items[0]!.data).toEqual(item.json().data);
    expect(JSON.stringify(items[0]!.data)).toContain('Zed');
  });

  test('a sync token of a collection starts the feed of that type after the walk', async () => {
    const token = (await get('/v1/services?limit=200')).json().meta.sync.token as string;
    const A = f.ids.A;
    apply(f.dataDir, [
      site(A.sites[0]!, 'not a service'),
      makeUpsert(
        'services',
        sampleRow('services', { id: A.services[0]!, company_id: COMPANY.A, name: 'svc' }),
        lsn++,
        { op: 'u' },
      ),
    ]);
    const { items, next } = await follow(`/v1/changes?sync=${token}`);
    expect(items.map((item) => `${item.type}/${item.id}`)).toEqual([`services/${A.services[0]}`]);
    expect(new URL(next).searchParams.get('filter[type]')).toBe('services');
  });

  test("a sync token's feed starts after the walk's last change, also when that change is of its type", async () => {
    const A = f.ids.A;
    apply(f.dataDir, [site(A.sites[0]!, 'the last change before the token')]);
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const walk = (await get(`/v1/sites?filter[updated_since]=${future}`)).json();
    expect(walk.data).toEqual([]);
    const first = await page(`/v1/changes?sync=${walk.meta.sync.token as string}`);
    expect(entries(first)).toEqual([]);
    expect(first.meta.page.has_more).toBe(false);
    apply(f.dataDir, [site(A.sites[1]!, 'after the token')]);
    expect(entries(await page(first.links.next))).toEqual([`upsert sites/${A.sites[1]}`]);
  });

  test('each company sees only its own changes', async () => {
    const { items } = await follow('/v1/changes', f.keys.b);
    // No document names its company: what tells the companies apart is the records' ids.
    const seen = new Set(items.map((item) => item.id));
    const ofA = Object.values(f.ids.A).flat();
    expect(ofA.length).toBeGreaterThan(0);
    expect(ofA.filter((id) => seen.has(id))).toEqual([]);
    expect(f.ids.B.sites.filter((id) => !seen.has(id))).toEqual([]);
  });
});

describe('scopes and parameters', () => {
  test('a named type without its scope: 403 naming it; include[equipment]=category needs the categories scope', async () => {
    const named = await get('/v1/changes?filter[type]=sites,equipment-categories', f.keys.noCategories);
    expectProblem(named, OP, 403, 'insufficient_scope');
    expect(named.json().detail).toContain('equipment-categories:read');
    const include = await get('/v1/changes?include[equipment]=category', f.keys.noCategories);
    expectProblem(include, OP, 403, 'insufficient_scope');
    expectProblem(await get('/v1/changes', f.keys.noScopes), OP, 403, 'insufficient_scope');
    // Without filter[type]: only the types the key may read.
    const { items } = await follow('/v1/changes', f.keys.noCategories);
    expect(items.some((item) => item.type === 'equipment-categories')).toBe(false);
  });

  test('a tampered cursor, one of other types or of another feed: 400 invalid_cursor', async () => {
    const first = await page('/v1/changes?filter[type]=sites,services&limit=1');
    const cursor = new URL(first.links.next).searchParams.get('cursor')!;
    expect((await get(`/v1/changes?filter[type]=services,sites&cursor=${cursor}`)).statusCode).toBe(200);
    expectProblem(await get(`/v1/changes?filter[type]=sites&cursor=${cursor}`), OP, 400, 'invalid_cursor');
    expectProblem(
      await get(`/v1/changes?filter[type]=sites,services&cursor=${cursor}`, f.keys.b),
      OP,
      400,
      'invalid_cursor',
    );
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    expectProblem(await get(`/v1/changes?cursor=${tampered}`), OP, 400, 'invalid_cursor');
    const deletions = await get('/v1/deletions?limit=1');
    const other = new URL(deletions.json().links.self).searchParams.get('cursor');
    expect(other).toBeNull();
    const list = (await get('/v1/sites?limit=1')).json();
    const listCursor = new URL(list.links.next).searchParams.get('cursor')!;
    expectProblem(await get(`/v1/changes?cursor=${listCursor}`), OP, 400, 'invalid_cursor');
  });

  test('sync with filter[type] or cursor, wait above 30, unknown parameters: 400 invalid_parameter', async () => {
    const token = (await get('/v1/sites?limit=200')).json().meta.sync.token as string;
    const cursor = new URL((await page('/v1/changes?limit=1')).links.next).searchParams.get('cursor')!;
    for (const url of [
      `/v1/changes?sync=${token}&filter[type]=sites`,
      `/v1/changes?sync=${token}&cursor=${cursor}`,
      '/v1/changes?wait=31',
      '/v1/changes?wait=-1',
      '/v1/changes?include=contacts',
      '/v1/changes?include[sites]=category',
      '/v1/changes?filter[type]=contacts',
    ]) {
      expectProblem(await get(url), OP, 400, 'invalid_parameter');
    }
  });

  test('limit is clamped like every collection', async () => {
    expect((await page('/v1/changes?limit=1000')).meta.page.limit).toBe(200);
    const one = await page('/v1/changes?limit=0');
    expect(one.meta.page).toEqual({ limit: 1, has_more: true });
  });
});

describe('410 sync_window_expired', () => {
  test('a position older than the deletions kept, or from another generation of the file', async () => {
    const dir = copyOfFixture();
    const other = await testApp(dir);
    try {
      const first = await page('/v1/changes?limit=1', f.keys.a, other);
      // Later pages of the walk from the start are fine while the horizon stays where it began.
      expect((await get(first.links.next, f.keys.a, other)).statusCode).toBe(200);
      const db = openWriter(companyPath(dir, COMPANY.A));
      db.prepare('UPDATE meta SET tombstones_since_us = last_changed_us + 10').run();
      db.close();
      expectProblem(await get(first.links.next, f.keys.a, other), OP, 410, 'sync_window_expired');
      // A walk from the start is never refused on its first page.
      const fresh = await page('/v1/changes?limit=1', f.keys.a, other);
      const writer = openWriter(companyPath(dir, COMPANY.A));
      writer.prepare('UPDATE meta SET created_us = created_us + 1').run();
      writer.close();
      expectProblem(await get(fresh.links.next, f.keys.a, other), OP, 410, 'sync_window_expired');
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Resolves once `on` holds `count` change-feed requests (its gauge), instead of sleeping a guess. */
async function heldRequests(count: number, on: FastifyInstance = app): Promise<void> {
  await vi.waitFor(
    async () => {
      const gauge = await on.metrics.registry.getSingleMetricAsString('pda_api_held_requests');
      expect(gauge).toMatch(new RegExp(`^pda_api_held_requests ${count}$`, 'm'));
    },
    { timeout: 10_000, interval: 10 },
  );
}

describe('wait: long-poll', () => {
  test('an empty page is held until a commit, then answered with the change', async () => {
    const { next } = await follow('/v1/changes?filter[type]=sites');
    const started = Date.now();
    const held = get(`${next}&wait=10`);
    // Held first, then the commit: the answer is the wake-up, not a first read that found it.
    await heldRequests(1);
    apply(f.dataDir, [site(f.ids.A.sites[0]!, 'woken')]);
    const response = await held;
    const elapsed = Date.now() - started;
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as Page).data.map((item) => item.data?.name)).toEqual(['woken']);
    expect(elapsed).toBeLessThan(3000);
  });

  test('a commit of another type does not answer it; the timeout answers the empty page, same position', async () => {
    const { next } = await follow('/v1/changes?filter[type]=consumables');
    const url = `${next}&wait=1`;
    const started = Date.now();
    const held = get(url);
    await heldRequests(1);
    apply(f.dataDir, [site(f.ids.A.sites[0]!, 'not a consumable')]);
    const response = await held;
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json() as Page;
    expect(body.data).toEqual([]);
    expect(new URL(body.links.next).searchParams.get('cursor')).toBe(
      new URL(next).searchParams.get('cursor'),
    );
    expect(body.links.next).toContain('wait=1');
  });

  test('a held request is charged once, on arrival: it spends no budget while held', async () => {
    const limited = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: '100' } });
    try {
      const { next } = await follow('/v1/changes?filter[type]=consumables', f.keys.a, limited);
      const before = Number((await get(next, f.keys.a, limited)).headers['ratelimit-remaining']);
      const held = await get(`${next}&wait=2`, f.keys.a, limited);
      expect(Number(held.headers['ratelimit-remaining'])).toBe(before - 1);
      const after = Number((await get(next, f.keys.a, limited)).headers['ratelimit-remaining']);
      expect(after).toBe(before - 2);
    } finally {
      await limited.close();
    }
  });

  test('a client that goes away releases its held request', async () => {
    const listening = await testApp(f.dataDir);
    try {
      await listening.listen({ host: '127.0.0.1', port: 0 });
      const { port } = listening.server.address() as AddressInfo;
      const { next } = await follow('/v1/changes?filter[type]=consumables', f.keys.a, listening);
      const url = new URL(`${next}&wait=20`);
      const request = httpGet({
        host: '127.0.0.1',
        port,
        path: `${url.pathname}${url.search}`,
        headers: bearer(f.keys.a),
      });
      request.on('error', () => undefined);
      const gauge = async () =>
        (await listening.metrics.registry.getSingleMetricAsString('pda_api_held_requests')).match(
          /^pda_api_held_requests (\d+)$/m,
        )?.[1];
      for (let i = 0; i < 50 && (await gauge()) !== '1'; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await gauge()).toBe('1');
      request.destroy();
      for (let i = 0; i < 50 && (await gauge()) !== '0'; i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await gauge()).toBe('0');
    } finally {
      await listening.close();
    }
  });

  test('held requests are bounded (503 with Retry-After beyond), counted by a gauge, released on shutdown', async () => {
    const bounded = await testApp(f.dataDir, { env: { API_MAX_HELD_REQUESTS: '1' } });
    const { next } = await follow('/v1/changes?filter[type]=consumables', f.keys.a, bounded);
    const started = Date.now();
    const held = get(`${next}&wait=20`, f.keys.a, bounded);
    await heldRequests(1, bounded);
    const refused = await get(`${next}&wait=20`, f.keys.a, bounded);
    expectProblem(refused, OP, 503, 'service_unavailable');
    expect(refused.headers['retry-after']).toBe('1');
    // Without wait it is answered as always.
    expect((await get(next, f.keys.a, bounded)).statusCode).toBe(200);
    await bounded.close();
    const response = await held;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as Page).data).toEqual([]);
  });
});
