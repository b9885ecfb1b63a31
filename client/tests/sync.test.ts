import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createClient, type SyncItem, SyncWindowExpiredError } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';

// syncSince against the real api: the deletions of the resource, then its records changed since
// the time, in one tagged stream; and 410 sync_window_expired as SyncWindowExpiredError before
// anything is yielded. The changes are applied through ProjectionStore with a clock ten minutes
// after `since`, which itself is a minute after the files were created (a new file vouches for its
// deletions from its creation on, and the api subtracts 60 s from the time).

const MINUTE = 60_000;
let f: Fixture;
let api: RunningApi;
let since: Date;

beforeAll(async () => {
  f = createFixture();
  since = new Date(Date.now() + MINUTE);
  const A = f.ids.A;
  const store = ProjectionStore.open({
    dataDir: f.dataDir,
    clockUs: () => (since.getTime() + 10 * MINUTE) * 1000,
  });
  let lsn = 10_000;
  store.applyBatch([
    makeDelete('sites', { id: A.sites[0]! }, lsn++),
    makeUpsert(
      'sites',
      sampleRow('sites', { id: A.sites[1]!, company_id: COMPANY.A, name: 'renamed' }),
      lsn++,
      {
        op: 'u',
      },
    ),
    makeUpsert(
      'sites',
      sampleRow('sites', { id: A.sites[2]!, company_id: COMPANY.A, name: 'renamed too' }),
      lsn++,
      {
        op: 'u',
      },
    ),
    makeDelete('services', { id: A.services[0]! }, lsn++),
  ]);
  store.close();
  api = await startApi(f.dataDir);
});
afterAll(async () => {
  await api.close();
  f.cleanup();
});

const client = () => createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a });

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const summary = (item: SyncItem<'sites'>) =>
  item.kind === 'record' ? `record ${item.record.id} ${item.record.name}` : `deletion ${item.deletion.id}`;

describe('syncSince', () => {
  test('the deletions of the resource, then its records changed since the time, across pages', async () => {
    const A = f.ids.A;
    const items = await collect(
      client().syncSince('sites', since, { query: { limit: 1, include: 'contacts' } }),
    );
    expect(items.map(summary)).toEqual([
      `deletion ${A.sites[0]}`,
      `record ${A.sites[1]} renamed`,
      `record ${A.sites[2]} renamed too`,
    ]);
    const deletion = items[0];
    expect(deletion?.kind === 'deletion' && deletion.deletion).toEqual({
      type: 'sites',
      id: A.sites[0],
      deleted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    });
    const record = items[1];
    expect(record?.kind === 'record' && record.record.contacts).toEqual(expect.any(Array));
  });

  test('only the named resource: services see their own deletion and nothing else', async () => {
    const items = await collect(client().syncSince('services', since.toISOString()));
    expect(items).toEqual([
      {
        kind: 'deletion',
        deletion: { type: 'services', id: f.ids.A.services[0], deleted_at: expect.any(String) },
      },
    ]);
  });

  test('applied in order as upserts and removes, the copy equals a full export', async () => {
    const copy = new Map<string, unknown>();
    for await (const site of client().exportAll('sites')) copy.set(site.id, site);
    expect(copy.size).toBe(2);
    // A partner whose copy predates the changes: the three original sites.
    const stale = new Map<string, unknown>(f.ids.A.sites.map((id) => [id, { id }]));
    for await (const item of client().syncSince('sites', since)) {
      if (item.kind === 'record') stale.set(item.record.id, item.record);
      else stale.delete(item.deletion.id);
    }
    expect(stale).toEqual(copy);
  });

  test('a time older than the deletions kept: SyncWindowExpiredError (410) before anything is yielded', async () => {
    const yielded: unknown[] = [];
    const error = await (async () => {
      for await (const item of client().syncSince('sites', new Date(Date.now() - 60 * MINUTE)))
        yielded.push(item);
    })().then(
      () => expect.fail('expected SyncWindowExpiredError'),
      (e: unknown) => e,
    );
    expect(yielded).toEqual([]);
    expect(error).toBeInstanceOf(SyncWindowExpiredError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'SyncWindowExpiredError', status: 410, code: 'sync_window_expired' });
    expect((error as ApiError).requestId).toEqual(expect.any(String));
  });

  test('deletions() alone answers the same error class', async () => {
    await expect(
      client().deletions({ 'filter[deleted_since]': new Date(Date.now() - 60 * MINUTE).toISOString() }),
    ).rejects.toBeInstanceOf(SyncWindowExpiredError);
  });
});
