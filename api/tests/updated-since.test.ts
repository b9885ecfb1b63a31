import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProjection, makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPANY, keyGrant, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// filter[updated_since] compares with the projection change time (assigned in commit order by
// the single writer), widened by a 60 s overlap (docs/architecture.md#change-time-and-updated_since).
// A change to an embedded relation counts as a change of its parent, so incremental sync with
// include never misses it.

const KEY = 'svc_pk_incrementalincremental01';
const SCOPES = ['sites:read', 'equipment:read', 'equipment-categories:read'];
const T1 = Date.parse('2026-03-01T10:00:00Z');
const T2 = T1 + 3_600_000;
const id = (n: number) => uuid(0x7, n);
const S1 = id(1);
const S2 = id(2);
const S3 = id(3);
const C1 = id(11);
const C2 = id(12);
const E1 = id(21);
const E2 = id(22);

let dataDir: string;
let app: FastifyInstance;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pda-api-since-'));
  const tenant = { company_id: COMPANY.A };
  let lsn = 1;
  // Batch 1, applied at T1: everything exists. The source's updated_at is deliberately old and
  // unrelated: the filter must not look at it.
  buildProjection(
    dataDir,
    [
      makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), lsn++),
      ...keyGrant({ key: KEY, id: uuid(0xe, 1), companies: [COMPANY.A], scopes: SCOPES }, () => lsn++),
      ...[S1, S2, S3].map((site) => makeUpsert('sites', sampleRow('sites', { id: site, ...tenant }), lsn++)),
      ...[C1, C2].map((c) =>
        makeUpsert('equipment_categories', sampleRow('equipment_categories', { id: c, ...tenant }), lsn++),
      ),
      makeUpsert('equipment', sampleRow('equipment', { id: E1, category_id: C1, ...tenant }), lsn++),
      makeUpsert('equipment', sampleRow('equipment', { id: E2, category_id: C2, ...tenant }), lsn++),
    ],
    { clockUs: () => T1 * 1000 },
  );
  // Batch 2, applied at T2: S2 edited (with an updated_at in the past, like a late commit), a
  // contact added to S3, category C1 repriced.
  buildProjection(
    dataDir,
    [
      makeUpsert(
        'sites',
        sampleRow('sites', { id: S2, ...tenant, name: 'renamed', updated_at: '2020-01-01T00:00:00.000000Z' }),
        lsn++,
      ),
      makeUpsert('site_contacts', sampleRow('site_contacts', { id: id(31), site_id: S3, ...tenant }), lsn++),
      makeUpsert(
        'equipment_categories',
        sampleRow('equipment_categories', { id: C1, ...tenant, default_client_rate_amount: '999.99' }),
        lsn++,
      ),
    ],
    { clockUs: () => T2 * 1000 },
  );
  app = await testApp(dataDir);
});

afterAll(async () => {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function idsSince(path: string, sinceMs: number, extra = ''): Promise<string[]> {
  const since = new Date(sinceMs).toISOString();
  const response = await app.inject({
    url: `${path}?filter[updated_since]=${since}${extra}`,
    headers: bearer(KEY),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.map((row: { id: string }) => row.id);
}

describe('filter[updated_since]', () => {
  test('everything changed at or after the time is returned (site edits and contact changes)', async () => {
    expect(await idsSince('/v1/sites', T1 - 3_600_000)).toEqual([S1, S2, S3]);
    expect(await idsSince('/v1/sites', T2)).toEqual([S2, S3]);
  });

  test('a category change moves its equipment', async () => {
    expect(await idsSince('/v1/equipment', T2, '&include=category')).toEqual([E1]);
    expect(await idsSince('/v1/equipment-categories', T2)).toEqual([C1]);
  });

  test('the 60 s safety overlap: a partner clock up to a minute ahead still sees the change', async () => {
    expect(await idsSince('/v1/sites', T2 + 59_000)).toEqual([S2, S3]);
    expect(await idsSince('/v1/sites', T2 + 61_000)).toEqual([]);
  });

  test('the overlap is configurable (API_UPDATED_SINCE_OVERLAP_MS)', async () => {
    const narrow = await testApp(dataDir, { env: { API_UPDATED_SINCE_OVERLAP_MS: '1000' } });
    const since = new Date(T2 + 2_000).toISOString();
    const response = await narrow.inject({
      url: `/v1/sites?filter[updated_since]=${since}`,
      headers: bearer(KEY),
    });
    expect(response.json().data).toEqual([]);
    await narrow.close();
  });

  test('the documented procedure: a run started after batch 1 sees batch 2 in the next run', async () => {
    // Run 1 started between the batches and walked everything; run 2 passes run 1's start time.
    const run1Start = T1 + 600_000;
    expect(await idsSince('/v1/sites', run1Start)).toEqual([S2, S3]);
  });

  test('paging a filtered collection keeps the filter in the links', async () => {
    const since = new Date(T2).toISOString();
    const first = await app.inject({
      url: `/v1/sites?limit=1&filter[updated_since]=${since}`,
      headers: bearer(KEY),
    });
    const next = new URL(first.json().links.next);
    expect(next.searchParams.get('filter[updated_since]')).toBe(since);
    const second = await app.inject({ url: `${next.pathname}${next.search}`, headers: bearer(KEY) });
    expect(second.json().data.map((row: { id: string }) => row.id)).toEqual([S3]);
    expect(second.json().links.next).toBeNull();
  });
});

// docs/public-data-api-v1.md, "Deletions" 4: a deleted contact (not in the deletions feed: part of a
// site) or category (in the feed as itself) changes its parent's representation, so the parent is
// exported again by filter[updated_since] with the relation gone.
describe('a deleted relation moves its parent', () => {
  let relDir: string;
  let relApp: FastifyInstance;
  const T3 = T2 + 3_600_000;
  const CONTACT = id(41);

  beforeAll(async () => {
    relDir = mkdtempSync(join(tmpdir(), 'pda-api-since-rel-'));
    const tenant = { company_id: COMPANY.A };
    let lsn = 1;
    buildProjection(
      relDir,
      [
        makeUpsert('companies', sampleRow('companies', { id: COMPANY.A }), lsn++),
        ...keyGrant({ key: KEY, id: uuid(0xe, 1), companies: [COMPANY.A], scopes: SCOPES }, () => lsn++),
        ...[S1, S2].map((site) => makeUpsert('sites', sampleRow('sites', { id: site, ...tenant }), lsn++)),
        makeUpsert(
          'site_contacts',
          sampleRow('site_contacts', { id: CONTACT, site_id: S2, ...tenant }),
          lsn++,
        ),
        ...[C1, C2].map((c) =>
          makeUpsert('equipment_categories', sampleRow('equipment_categories', { id: c, ...tenant }), lsn++),
        ),
        makeUpsert('equipment', sampleRow('equipment', { id: E1, category_id: C1, ...tenant }), lsn++),
        makeUpsert('equipment', sampleRow('equipment', { id: E2, category_id: C2, ...tenant }), lsn++),
      ],
      { clockUs: () => T1 * 1000 },
    );
    // At T3 only the contact and category C2 are deleted (key-only deletes, as Debezium sends them).
    buildProjection(
      relDir,
      [
        makeDelete('site_contacts', { id: CONTACT }, lsn++),
        makeDelete('equipment_categories', { id: C2 }, lsn++),
      ],
      { clockUs: () => T3 * 1000 },
    );
    relApp = await testApp(relDir);
  });

  afterAll(async () => {
    await relApp.close();
    rmSync(relDir, { recursive: true, force: true });
  });

  const pageSince = async (path: string, extra: string) => {
    const response = await relApp.inject({
      url: `${path}?filter[updated_since]=${new Date(T3).toISOString()}${extra}`,
      headers: bearer(KEY),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data as Record<string, unknown>[];
  };

  test('a deleted contact: its site again, without the contact', async () => {
    expect(await pageSince('/v1/sites', '&include=contacts')).toEqual([
      expect.objectContaining({ id: S2, contacts: [] }),
    ]);
  });

  test('a deleted category: its equipment again, with category null', async () => {
    expect(await pageSince('/v1/equipment', '&include=category')).toEqual([
      expect.objectContaining({ id: E2, category_id: C2, category: null }),
    ]);
    expect(await pageSince('/v1/equipment-categories', '')).toEqual([]);
  });
});
