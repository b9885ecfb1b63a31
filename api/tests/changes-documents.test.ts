import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectConforms } from './support/conformance.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// GET /v1/changes reads each page's rows with their documents in one statement for every type
// (projections/src/read/changes-rows.ts), each type with its own columns (equipment's category
// key beside the stored document). Every upsert of a walk of all types, at any page size and with
// both includes, carries the data its item endpoint serves with the same include.

const OP = 'listChanges';
let f: Fixture;
let app: FastifyInstance;

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir);
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

interface Item {
  op: 'upsert' | 'delete';
  type: string;
  id: string;
  data?: unknown;
}

const get = (url: string) => app.inject({ url: url.replace(TEST_BASE_URL, ''), headers: bearer(f.keys.a) });

async function walk(url: string): Promise<Item[]> {
  const items: Item[] = [];
  for (let next = url; ; ) {
    const response = await get(next);
    expect(response.statusCode, response.body).toBe(200);
    expectConforms(response, OP);
    const body = response.json() as {
      data: Item[];
      meta: { page: { has_more: boolean } };
      links: { next: string };
    };
    items.push(...body.data);
    if (!body.meta.page.has_more) return items;
    next = body.links.next;
  }
}

const ITEM_INCLUDE: Record<string, string> = { sites: 'contacts', equipment: 'category' };

describe('GET /v1/changes documents', () => {
  test.each([1, 2, 5, 50])(
    'limit %i: every upsert is its item endpoint, includes embedded',
    async (limit) => {
      const items = await walk(
        `/v1/changes?limit=${limit}&include[equipment]=category&include[sites]=contacts`,
      );
      const types = new Set(items.map((item) => item.type));
      expect([...types].sort()).toEqual([
        'consumables',
        'equipment',
        'equipment-categories',
        'services',
        'sites',
      ]);
      for (const item of items) {
        const include = ITEM_INCLUDE[item.type];
        const one = await get(`/v1/${item.type}/${item.id}${include ? `?include=${include}` : ''}`);
        expect(item.data, `${item.type}/${item.id}`).toEqual(one.json().data);
      }
      // The includes are there: a category embedded (one points at none: null), contacts listed.
      const equipment = items
        .filter((item) => item.type === 'equipment')
        .map((item) => item.data as { category: unknown });
      expect(equipment.some((data) => data.category !== null && typeof data.category === 'object')).toBe(
        true,
      );
      expect(equipment.some((data) => data.category === null)).toBe(true);
      const sites = items
        .filter((item) => item.type === 'sites')
        .map((item) => item.data as { contacts: unknown[] });
      expect(sites.some((data) => data.contacts.length > 0)).toBe(true);
    },
  );
});
