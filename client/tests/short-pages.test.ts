import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { changedPlanMax, sinceScanBudget } from '@pda/projections/read';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';

// A page may be short, even empty, while has_more is true (docs/public-data-api-v1.md, "Short
// pages"): the client's walks follow links.next to its end whatever the pages hold. Here the sites
// changed since the time are the newest by created_at, behind more unchanged sites than one
// page's budget: sorted by created_at, the first pages of the walk hold nothing.

const MINUTE = 60_000;
const UNCHANGED = 1_400;
const CHANGED = 300;
let f: Fixture;
let api: RunningApi;
let since: Date;
let changed: string[];

const siteId = (n: number) => `00000000-0000-4000-8000-5${String(n).padStart(11, '0')}`;
const createdAt = (year: number, n: number) =>
  `${year}-01-01T00:${String(Math.floor(n / 60) % 60).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}.${String(n).padStart(6, '0')}Z`;

beforeAll(async () => {
  f = createFixture();
  since = new Date(Date.now() + 2 * MINUTE);
  let lsn = 20_000;
  const site = (n: number, year: number) =>
    makeUpsert(
      'sites',
      sampleRow('sites', { id: siteId(n), company_id: COMPANY.A, created_at: createdAt(year, n) }),
      lsn++,
    );
  const before = ProjectionStore.open({ dataDir: f.dataDir });
  before.applyBatch(Array.from({ length: UNCHANGED }, (_, n) => site(n, 2025)));
  before.close();
  const after = ProjectionStore.open({
    dataDir: f.dataDir,
    clockUs: () => (since.getTime() + 10 * MINUTE) * 1000,
  });
  after.applyBatch(Array.from({ length: CHANGED }, (_, n) => site(UNCHANGED + n, 2027)));
  after.close();
  changed = Array.from({ length: CHANGED }, (_, n) => siteId(UNCHANGED + n));
  api = await startApi(f.dataDir);
});

afterAll(async () => {
  await api.close();
  f.cleanup();
});

const client = () => createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a });

describe('walks over short and empty pages', () => {
  test('the first page of the walk is empty and has more (else this tests nothing)', async () => {
    expect(sinceScanBudget(1)).toBeLessThan(UNCHANGED);
    expect(changedPlanMax(1, false)).toBeLessThan(CHANGED);
    const page = await client().list('sites', {
      'filter[updated_since]': since.toISOString(),
      sort: 'created_at',
      limit: 1,
    });
    expect(page.data).toEqual([]);
    expect(page.meta.page.has_more).toBe(true);
    expect(page.links.next).not.toBeNull();
  });

  test('syncSince yields every changed site once, in order', async () => {
    const ids: string[] = [];
    for await (const item of client().syncSince('sites', since, {
      query: { sort: 'created_at', limit: 1 },
    })) {
      expect(item.kind).toBe('record');
      if (item.kind === 'record') ids.push(item.record.id);
    }
    expect(ids).toEqual(changed);
  });

  test('exportAll with the filter, at the default limit, too', async () => {
    const ids: string[] = [];
    for await (const record of client().exportAll('sites', {
      query: { 'filter[updated_since]': since.toISOString(), sort: 'created_at' },
    })) {
      ids.push(record.id);
    }
    expect(ids).toEqual(changed);
  });
});
