import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { companyPath } from '@pda/projections/model';
import { makeDelete, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Change, createClient, type FollowPage, SyncWindowExpiredError } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';

// client.follow against the real api: from the start until caught up, resumed from a stored
// position after a stop, woken by a commit while waiting, and the 410 as SyncWindowExpiredError.

let f: Fixture;
let api: RunningApi;
let lsn = 30_000;

beforeAll(async () => {
  f = createFixture();
  api = await startApi(f.dataDir);
});
afterAll(async () => {
  await api.close();
  f.cleanup();
});

function commit(changes: Parameters<ProjectionStore['applyBatch']>[0]): void {
  const store = ProjectionStore.open({ dataDir: f.dataDir });
  store.applyBatch(changes);
  store.close();
}
const client = () => createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a });
const label = (change: Change) => `${change.op} ${change.type}/${change.id}`;

async function untilCaughtUp(from?: string): Promise<{ changes: Change[]; position: string }> {
  const changes: Change[] = [];
  let position = from ?? '';
  for await (const page of client().follow({ ...(from ? { from } : {}), limit: 3, untilCaughtUp: true })) {
    changes.push(...page.changes);
    position = page.position;
  }
  return { changes, position };
}

describe('client.follow', () => {
  test('from the start: every record once; then from the stored position: only what changed', async () => {
    const first = await untilCaughtUp();
    const A = f.ids.A;
    expect(first.changes).toHaveLength(
      A.sites.length + A.services.length + A.categories.length + A.equipment.length + A.consumables.length,
    );
    commit([
      makeDelete('services', { id: A.services[0]! }, lsn++),
      makeUpsert('sites', sampleRow('sites', { id: A.sites[0]!, company_id: COMPANY.A, name: 'x' }), lsn++, {
        op: 'u',
      }),
    ]);
    const second = await untilCaughtUp(first.position);
    expect(second.changes.map(label)).toEqual([
      `delete services/${A.services[0]}`,
      `upsert sites/${A.sites[0]}`,
    ]);
    expect((await untilCaughtUp(second.position)).changes).toEqual([]);
  });

  test('once caught up it waits, and a commit wakes it', async () => {
    const { position } = await untilCaughtUp();
    const controller = new AbortController();
    const pages: FollowPage[] = [];
    const started = Date.now();
    const following = (async () => {
      try {
        for await (const page of client().follow({ from: position, wait: 10, signal: controller.signal })) {
          pages.push(page);
          if (page.changes.length > 0) return;
        }
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 300));
    commit([
      makeUpsert(
        'consumables',
        sampleRow('consumables', { id: f.ids.A.consumables[0]!, company_id: COMPANY.A }),
        lsn++,
        {
          op: 'u',
        },
      ),
    ]);
    await following;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(pages.flatMap((page) => page.changes).map(label)).toEqual([
      `upsert consumables/${f.ids.A.consumables[0]}`,
    ]);
  });

  // The links of a waiting page keep its `wait` (docs/partners.md, "Follow the feed"): a follower
  // that added it again would send it twice, which the api refuses (400 invalid_parameter).
  test('a link that already carries wait is followed with wait once', async () => {
    const { position } = await untilCaughtUp();
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      sent.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const follower = createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a, fetch: recording });
    const positions: string[] = [];
    // The first page is asked without wait (not known to be caught up yet), the next two with it:
    // the third follows the link of a waiting page, which carries wait already.
    for await (const page of follower.follow({ from: position, wait: 1 })) {
      positions.push(page.position);
      if (positions.length === 3) break;
    }
    const waits = (url: string) => new URL(url).searchParams.getAll('wait');
    expect(sent.map(waits)).toEqual([[], ['1'], ['1']]);
    expect(positions.map(waits)).toEqual([[], ['1'], ['1']]);
  });

  test('410 is SyncWindowExpiredError', async () => {
    const { position } = await untilCaughtUp();
    const db = openWriter(companyPath(f.dataDir, COMPANY.A));
    db.prepare('UPDATE meta SET created_us = created_us + 1').run();
    db.close();
    await expect(untilCaughtUp(position)).rejects.toBeInstanceOf(SyncWindowExpiredError);
  });
});
