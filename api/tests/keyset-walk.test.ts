import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Change } from '@pda/projections/model';
import { buildProjection, makeUpsert, sampleRow } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPANY, keyGrant, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Issue #4: walk a 10,000-row collection with limit=37 under every allowed sort, forward with
// links.next and back with links.prev: every row exactly once, in the right order.

const ROWS = 10_000;
const LIMIT = 37;
const KEY = 'svc_pk_walkwalkwalkwalkwalk0001';

interface Site {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

let dataDir: string;
let app: FastifyInstance;
const sites: Site[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-api-walk-'));
  const changes: Change[] = [];
  let lsn = 1;
  changes.push(makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), lsn++));
  changes.push(
    ...keyGrant({ key: KEY, id: uuid(0xe, 1), companies: [COMPANY.A], scopes: ['sites:read'] }, () => lsn++),
  );
  for (let i = 0; i < ROWS; i++) {
    // Few distinct values per sort column, so ties (and the id tie-breaker) are everywhere,
    // including across page boundaries; ids are inserted out of order.
    const n = (i * 7919) % ROWS;
    const site: Site = {
      id: uuid(0x5, n),
      name: `Site ${String((i * 31) % 97).padStart(2, '0')}`,
      created_at: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00.000000Z`,
      updated_at: `2026-02-01T00:00:${String(i % 13).padStart(2, '0')}.000000Z`,
    };
    sites.push(site);
    changes.push(makeUpsert('sites', sampleRow('sites', { ...site, company_id: COMPANY.A }), lsn++));
  }
  buildProjection(dataDir, changes);
  app = await testApp(dataDir, { env: { API_RATE_LIMIT_MAX: '1000000' } });
}, 120_000);

afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function expectedOrder(sort: string): string[] {
  const keys = sort.split(',').map((part) => ({
    column: part.replace(/^-/, '') as keyof Site,
    descending: part.startsWith('-'),
  }));
  const last = keys[keys.length - 1]!;
  if (last.column !== 'id') keys.push({ column: 'id', descending: last.descending });
  return [...sites]
    .sort((a, b) => {
      for (const key of keys) {
        if (a[key.column] === b[key.column]) continue;
        const ascending = a[key.column] < b[key.column] ? -1 : 1;
        return key.descending ? -ascending : ascending;
      }
      return 0;
    })
    .map((site) => site.id);
}

async function page(url: string) {
  const response = await app.inject({ url, headers: bearer(KEY) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as {
    data: { id: string }[];
    meta: { page: { limit: number; has_more: boolean } };
    links: { self: string; next: string | null; prev: string | null };
  };
}

/** links are absolute URLs from API_PUBLIC_BASE_URL; inject takes the path and query. */
const local = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

const SORTS = [
  'id',
  '-id',
  'name',
  '-name',
  'created_at',
  '-created_at',
  'updated_at',
  '-updated_at',
  '-updated_at,name',
  'name,-created_at',
  'created_at,-name,updated_at',
];

describe.each(SORTS)('sort=%s', (sort) => {
  test('forward with next, then back with prev: every row once, in order', async () => {
    const expected = expectedOrder(sort);
    const forward: string[][] = [];
    let body = await page(`/v1/sites?limit=${LIMIT}&sort=${sort}&fields[sites]=id`);
    expect(body.links.prev).toBeNull();
    forward.push(body.data.map((row) => row.id));
    while (body.links.next) {
      expect(body.meta.page.has_more).toBe(true);
      body = await page(local(body.links.next));
      expect(body.data.length).toBeGreaterThan(0);
      forward.push(body.data.map((row) => row.id));
    }
    expect(body.meta.page.has_more).toBe(false);
    expect(forward.flat()).toEqual(expected);
    expect(forward).toHaveLength(Math.ceil(ROWS / LIMIT));

    const backward: string[][] = [];
    let pages = 1;
    while (body.links.prev) {
      body = await page(local(body.links.prev));
      backward.unshift(body.data.map((row) => row.id));
      pages++;
    }
    // Back on the first page: the same rows as the first page of the walk.
    expect(backward[0]).toEqual(forward[0]);
    expect([...backward.flat(), ...forward[forward.length - 1]!]).toEqual(expected);
    expect(pages).toBe(forward.length);
  });
});
