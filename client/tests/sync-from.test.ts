import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { companyPath } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, type SyncTokens, SyncWindowExpiredError, type TokenSyncItem } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';

// syncFrom against the real api: a full export hands out tokens, a run from them yields exactly
// what changed since (deletions first, then records, then the checkpoint), and polling the same
// tokens again costs a 304 and no rate-limit budget.

let f: Fixture;
let api: RunningApi;
let lsn = 20_000;
let clockMs = Date.now();

beforeAll(async () => {
  f = createFixture();
  api = await startApi(f.dataDir);
});
afterAll(async () => {
  await api.close();
  f.cleanup();
});

function commit(changes: Parameters<ProjectionStore['applyBatch']>[0]): void {
  clockMs += 1000;
  const at = clockMs;
  const store = ProjectionStore.open({ dataDir: f.dataDir, clockUs: () => at * 1000 });
  store.applyBatch(changes);
  store.close();
}

/** Counts the answers by status (a partner's own fetch, passed to the client). */
function countingFetch() {
  const statuses: number[] = [];
  const counted: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  return { statuses, counted };
}

async function run(client: ReturnType<typeof createClient>, from: SyncTokens | null) {
  const items: TokenSyncItem<'sites'>[] = [];
  for await (const item of client.syncFrom('sites', from, { query: { limit: 2 } })) items.push(item);
  const last = items.at(-1);
  if (last?.kind !== 'checkpoint') throw new Error('a run ends with its checkpoint');
  return { changes: items.slice(0, -1), next: last.next };
}

const ids = (items: TokenSyncItem<'sites'>[]) =>
  items.map((item) =>
    item.kind === 'record'
      ? `record ${item.record.id}`
      : item.kind === 'deletion'
        ? `deletion ${item.deletion.id}`
        : 'checkpoint',
  );

describe('syncFrom', () => {
  test('a full export, then exactly the changes since, then nothing; polls answer 304', async () => {
    const { statuses, counted } = countingFetch();
    const client = createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a, fetch: counted });
    const A = f.ids.A;
    const full = await run(client, null);
    expect(full.changes.filter((item) => item.kind === 'record')).toHaveLength(A.sites.length);

    commit([
      makeDelete('sites', { id: A.sites[0]! }, lsn++),
      makeUpsert('sites', sampleRow('sites', { id: A.sites[1]!, company_id: COMPANY.A, name: 'x' }), lsn++, {
        op: 'u',
      }),
    ]);
    const delta = await run(client, full.next);
    expect(ids(delta.changes)).toEqual([`deletion ${A.sites[0]}`, `record ${A.sites[1]}`]);

    // Nothing changed: the same tokens again are two 304s (their first pages were kept), no items.
    const quiet = await run(client, delta.next);
    expect(quiet.changes).toEqual([]);
    statuses.length = 0;
    const polled = await run(client, quiet.next);
    expect(polled.changes).toEqual([]);
    expect(polled.next).toEqual(quiet.next);
    expect(statuses).toEqual([304, 304]);
  });

  test('a rebuilt company: SyncWindowExpiredError before anything is yielded', async () => {
    const client = createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a });
    const { next } = await run(client, null);
    // What a rebuild leaves: the company's file is another generation (projections schema 5).
    const db = openWriter(companyPath(f.dataDir, COMPANY.A));
    db.prepare('UPDATE meta SET created_us = created_us + 1').run();
    db.close();
    const yielded: unknown[] = [];
    await expect(
      (async () => {
        for await (const item of client.syncFrom('sites', next)) yielded.push(item);
      })(),
    ).rejects.toBeInstanceOf(SyncWindowExpiredError);
    expect(yielded).toEqual([]);
    // The way back: a full export hands out tokens that work.
    const again = await run(client, null);
    expect((await run(client, again.next)).changes).toEqual([]);
  });
});
