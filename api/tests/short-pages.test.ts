import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changedPlanMax, sinceScanBudget } from '@pda/projections/read';
import { buildProjection, makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPANY, keyGrant, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Bounded work per page (docs/public-data-api-v1.md, "Pagination"): a page with a since passes
// at most a budget of index entries; when it runs out before the page is full the page is short,
// even empty, with has_more true and a links.next that continues where the scan stopped. Here
// the changed sites are the newest ones, at the end of created_at order (a bulk update of recent
// records): the first pages of a walk by created_at pass unchanged sites only.

const KEY = 'svc_pk_shortpagesshortpages0001';
const SITES = 4_000;
/** Deleted after the walk's changes: their tombstones come before the services' in the feed. */
const DELETED_SITES = 1_300;
const CHANGED = 400;
const LIMIT = 5;
const T1 = Date.parse('2026-03-01T10:00:00Z');
const T2 = T1 + 3_600_000;
const id = (n: number) => uuid(0x9, n);
/** Site n was created n minutes after the first: created_at order is n order. */
const createdAt = (n: number) => new Date(T1 - (SITES - n) * 60_000).toISOString().replace('Z', '000Z');

let dataDir: string;
let app: FastifyInstance;
/** The changed sites, in created_at order. */
let changed: string[];
let deletedServices: string[];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-api-short-'));
  const tenant = { company_id: COMPANY.A };
  let lsn = 1;
  const site = (n: number, name: string) =>
    makeUpsert('sites', sampleRow('sites', { id: id(n), name, created_at: createdAt(n), ...tenant }), lsn++);
  buildProjection(
    dataDir,
    [
      makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), lsn++),
      ...keyGrant(
        { key: KEY, id: uuid(0xe, 9), companies: [COMPANY.A], scopes: ['sites:read', 'services:read'] },
        () => lsn++,
      ),
      ...Array.from({ length: SITES }, (_, n) => site(n, `site ${n}`)),
    ],
    { clockUs: () => T1 * 1000 },
  );
  const newest = Array.from({ length: CHANGED }, (_, k) => SITES - CHANGED + k);
  buildProjection(
    dataDir,
    newest.map((n) => site(n, `changed ${n}`)),
    { clockUs: () => T2 * 1000 },
  );
  changed = newest.map(id);
  // Then many sites and a few services go: the deletions of services come after every site's.
  const services = [1, 2, 3].map((n) => uuid(0x5, n));
  buildProjection(
    dataDir,
    services.map((service) =>
      makeUpsert('services', sampleRow('services', { id: service, ...tenant }), lsn++),
    ),
    { clockUs: () => T2 * 1000 },
  );
  buildProjection(
    dataDir,
    [
      ...Array.from({ length: DELETED_SITES }, (_, n) => makeDelete('sites', { id: id(n) }, lsn++)),
      ...services.map((service) => makeDelete('services', { id: service }, lsn++)),
    ],
    { clockUs: () => (T2 + 60_000) * 1000 },
  );
  deletedServices = services;
  app = await testApp(dataDir);
});

afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface ListBody {
  data: { id: string }[];
  meta: { page: { has_more: boolean }; sync?: { token: string } };
  links: { next: string | null; prev: string | null };
}

async function get(url: string): Promise<ListBody> {
  const response = await app.inject({ method: 'GET', url, headers: bearer(KEY) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ListBody;
}

const relative = (link: string) => link.replace(/^https:\/\/api\.test\.example/, '');
const SINCE = encodeURIComponent(new Date(T2 - 1_000).toISOString());

describe('a since walk over clustered changes', () => {
  test('the budget is smaller than the unchanged rows in front, and the changes too many for the changed plan (else nothing here is short)', () => {
    expect(sinceScanBudget(LIMIT)).toBeLessThan(SITES - CHANGED - DELETED_SITES);
    expect(changedPlanMax(LIMIT, false)).toBeLessThan(CHANGED);
  });

  test('the first page is empty with has_more and a next link; following links.next gives every changed site once, in order', async () => {
    const first = await get(`/v1/sites?filter[updated_since]=${SINCE}&sort=created_at&limit=${LIMIT}`);
    expect(first.data).toEqual([]);
    expect(first.meta.page.has_more).toBe(true);
    expect(first.links.next).not.toBeNull();
    expect(first.meta.sync).toBeUndefined();

    const ids: string[] = [];
    const pages: ListBody[] = [first];
    let page = first;
    while (page.links.next !== null) {
      page = await get(relative(page.links.next));
      pages.push(page);
      expect(page.data.length).toBeLessThanOrEqual(LIMIT);
      expect(page.meta.page.has_more).toBe(page.links.next !== null);
      expect(pages.length).toBeLessThan(SITES);
    }
    for (const each of pages) for (const row of each.data) ids.push(row.id);
    expect(ids).toEqual(changed);
    // Short pages came before the changed rows; the last page hands out the sync token.
    expect(pages.filter((each) => each.data.length === 0).length).toBeGreaterThanOrEqual(1);
    expect(page.meta.sync?.token).toEqual(expect.any(String));

    // And back: links.prev from the last page to the first gives the same rows in reverse.
    const back: string[] = [];
    let at = page;
    while (at.links.prev !== null) {
      at = await get(relative(at.links.prev));
      back.unshift(...at.data.map((row) => row.id));
    }
    expect([...back, ...page.data.map((row) => row.id)]).toEqual(changed);
  });

  test('descending, the changed sites come first: full pages at once', async () => {
    const first = await get(`/v1/sites?filter[updated_since]=${SINCE}&sort=-created_at&limit=${LIMIT}`);
    expect(first.data.map((row) => row.id)).toEqual([...changed].reverse().slice(0, LIMIT));
  });
});

describe('the deletions of one type behind many of another', () => {
  test('the first pages pass site tombstones only: empty with has_more; following links.next gives the services', async () => {
    expect(sinceScanBudget(1)).toBeLessThan(DELETED_SITES);
    let page = (await get('/v1/deletions?filter[type]=services&limit=1')) as unknown as {
      data: { type: string; id: string }[];
      meta: { page: { has_more: boolean } };
      links: { next: string | null };
    };
    expect(page.data).toEqual([]);
    expect(page.meta.page.has_more).toBe(true);
    const ids: string[] = [];
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(DELETED_SITES);
      ids.push(...page.data.map((row) => row.id));
      if (page.links.next === null) break;
      page = (await get(relative(page.links.next))) as unknown as typeof page;
    }
    expect(ids).toEqual(deletedServices);
  });
});

describe('the change feed of one type behind many tombstones of another', () => {
  interface FeedBody {
    data: { op: string; type: string; id: string }[];
    meta: { page: { has_more: boolean } };
    links: { next: string };
  }

  test('a page that stops at its budget is empty with has_more, answered at once even with wait; following links.next gives the services', async () => {
    const started = Date.now();
    let page = (await get('/v1/changes?filter[type]=services&limit=1&wait=20')) as unknown as FeedBody;
    // Held for wait it would take 20 s: a short page is not "caught up".
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(page.data).toEqual([]);
    expect(page.meta.page.has_more).toBe(true);
    const seen: string[] = [];
    for (let pages = 0; page.meta.page.has_more; pages++) {
      expect(pages).toBeLessThan(DELETED_SITES);
      page = (await get(relative(page.links.next).replace('&wait=20', ''))) as unknown as FeedBody;
      seen.push(...page.data.map((row) => `${row.op} ${row.id}`));
    }
    expect(seen).toEqual(deletedServices.map((service) => `delete ${service}`));
  });
});
