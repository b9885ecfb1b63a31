import { COMPANY, createFixture, type Fixture } from '@pda/api/testing';
import { companyPath } from '@pda/projections/model';
import { freePort, makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type Change,
  createClient,
  type RetryEvent,
  type StreamChunk,
  SyncWindowExpiredError,
} from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';
import { startCuttingProxy } from './support/cutting-proxy.ts';

// client.stream against the real api: the paged feed's changes in one request, resumed by itself
// across connections cut mid-stream (a proxy that cuts after N bytes), live with commits as they
// land and a reconnect at each stream's lifetime, exportAll over the stream equal to exportAll over
// pages, and a rebuild's error line as SyncWindowExpiredError.

let f: Fixture;
let api: RunningApi;
let lsn = 50_000;

/** Sites enough for the walk to take several chunks of 200. */
const EXTRA_SITES = 450;

beforeAll(async () => {
  f = createFixture();
  commit(
    Array.from({ length: EXTRA_SITES }, (_, i) =>
      site(`00000000-0000-4000-8ccc-${String(i).padStart(12, '0')}`, `streamed site ${i}`),
    ),
  );
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
const site = (id: string, name: string) =>
  makeUpsert('sites', sampleRow('sites', { id, name, company_id: COMPANY.A }), lsn++, { op: 'u' });
const label = (change: Change) => `${change.op} ${change.type}/${change.id}`;

/** A client whose requests (URL, Accept) and answers' content codings are recorded. */
function recordingClient(baseUrl: string, extra: { onRetry?: (event: RetryEvent) => void } = {}) {
  const sent: { url: string; accept: string | undefined; coding: string | null }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const accept = (init?.headers as Record<string, string> | undefined)?.accept;
    sent.push({ url: String(input), accept, coding: response.headers.get('content-encoding') });
    return response;
  };
  const client = createClient({
    baseUrl,
    apiKey: f.keys.a,
    fetch: recording,
    retry: { baseDelayMs: 20 },
    ...extra,
  });
  return { client, sent };
}

async function pagedChanges(baseUrl = api.baseUrl): Promise<{ changes: Change[]; position: string }> {
  const changes: Change[] = [];
  let position = '';
  for await (const page of recordingClient(baseUrl).client.follow({ untilCaughtUp: true })) {
    changes.push(...page.changes);
    position = page.position;
  }
  return { changes, position };
}

async function collect(chunks: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const all: StreamChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

describe('client.stream', () => {
  test('every change of the paged feed, in order, in one compressed request; each chunk ≤ 200, the last caught up', async () => {
    const { client, sent } = recordingClient(api.baseUrl);
    const chunks = await collect(client.stream());
    const paged = await pagedChanges();
    expect(chunks.flatMap((c) => c.changes).map(label)).toEqual(paged.changes.map(label));
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.every((c) => c.changes.length <= 200)).toBe(true);
    expect(chunks.map((c) => c.caughtUp)).toEqual([...chunks.slice(1).map(() => false), true]);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.accept).toMatch(/^application\/x-ndjson/);
    expect(sent[0]?.coding).toBe('gzip');
    // Each position resumes right after its chunk: from the first, exactly the rest.
    const rest = await collect(client.stream({ from: chunks[0]!.position }));
    expect(rest.flatMap((c) => c.changes).map(label)).toEqual(
      chunks.slice(1).flatMap((c) => c.changes.map(label)),
    );
  });

  test('connections cut mid-stream at two byte offsets: resumed, nothing missed, nothing yielded twice, at most a chunk sent again', async () => {
    const port = await freePort();
    // Where the first position line ends in the stream's bytes: cut once inside the first chunk
    // (nothing yielded yet), then once inside the second (after one chunk was yielded).
    const whole = await (
      await fetch(`${api.baseUrl}/v1/changes`, {
        headers: { authorization: `Bearer ${f.keys.a}`, accept: 'application/x-ndjson' },
      })
    ).text();
    const firstPositionEnd = whole.indexOf('\n', whole.indexOf('{"op":"position"')) + 1;
    const cuts = [Math.floor(firstPositionEnd / 2), firstPositionEnd + 7_000];
    const proxy = await startCuttingProxy(() => `http://127.0.0.1:${port}`, cuts);
    const behind = await startApi(f.dataDir, { port, publicBaseUrl: proxy.url });
    try {
      const events: RetryEvent[] = [];
      const { client } = recordingClient(proxy.url, { onRetry: (event) => events.push(event) });
      const chunks = await collect(client.stream());
      const yielded = chunks.flatMap((c) => c.changes).map(label);
      expect(yielded).toEqual((await pagedChanges()).changes.map(label));
      expect(new Set(yielded).size).toBe(yielded.length);
      expect(proxy.bodies).toHaveLength(3);
      expect(events).toHaveLength(2);
      // What the api sent again: each cut answer's changes after its last whole position line.
      for (const body of proxy.bodies.slice(0, 2)) {
        const lines = body.split('\n').slice(0, -1);
        const lastPosition = lines.findLastIndex((line) => line.startsWith('{"op":"position"'));
        const sentAgain = lines.slice(lastPosition + 1).length;
        expect(sentAgain).toBeGreaterThan(0);
        expect(sentAgain).toBeLessThanOrEqual(200);
      }
      expect(proxy.bodies[0]).not.toContain('"op":"position"');
      expect(proxy.bodies[1]).toContain('"op":"position"');
    } finally {
      await proxy.close();
      await behind.close();
    }
  });

  test('exportAll over the stream equals exportAll over pages; an api that answers with pages is exported page by page', async () => {
    const byId = (records: { id: string }[]) =>
      Object.fromEntries(records.map((record) => [record.id, record]));
    const { client, sent } = recordingClient(api.baseUrl);
    for (const [resource, include] of [
      ['sites', 'contacts'],
      ['equipment', 'category'],
      ['services', undefined],
    ] as const) {
      const query = include === undefined ? {} : { include };
      sent.length = 0;
      const streamed = [];
      for await (const record of client.exportAll(resource, { query })) streamed.push(record);
      expect(sent.map((s) => s.accept?.split(',')[0])).toEqual(['application/x-ndjson']);
      const paged = [];
      for await (const record of client.exportAll(resource, { query: { ...query, limit: 200 } }))
        paged.push(record);
      expect(streamed.length).toBe(paged.length);
      expect(byId(streamed)).toEqual(byId(paged));
    }
    // A proxy that drops the stream's Accept: a 200 of JSON, so pages.
    const asJson: typeof fetch = (input, init) =>
      fetch(input, { ...init, headers: { ...(init?.headers as object), accept: 'application/json' } });
    const pagesOnly = createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a, fetch: asJson });
    const ids = [];
    for await (const record of pagesOnly.exportAll('sites')) ids.push(record.id);
    expect(ids.length).toBe(f.ids.A.sites.length + EXTRA_SITES);
  });
});

describe('client.stream({ live: true })', () => {
  let short: RunningApi;
  beforeAll(async () => {
    short = await startApi(f.dataDir, {
      env: { API_STREAM_MAX_LIFETIME_S: '2', API_STREAM_HEARTBEAT_S: '1' },
    });
  });
  afterAll(async () => short.close());

  test('a change applied after it caught up arrives; at the lifetime it reconnects from its position and goes on', async () => {
    const { position } = await pagedChanges(short.baseUrl);
    const { client, sent } = recordingClient(short.baseUrl);
    const controller = new AbortController();
    const ids = ['00000000-0000-4000-8ddd-000000000001', '00000000-0000-4000-8ddd-000000000002'];
    const seen: string[] = [];
    const started = Date.now();
    try {
      for await (const chunk of client.stream({ from: position, live: true, signal: controller.signal })) {
        seen.push(...chunk.changes.map(label));
        if (seen.length === 0 && chunk.caughtUp && sent.length === 1) commit([site(ids[0]!, 'live 1')]);
        // Past the first stream's lifetime, on the next connection: the second change.
        if (seen.length === 1 && sent.length === 2) commit([site(ids[1]!, 'live 2')]);
        if (seen.length === 2) break;
      }
    } finally {
      controller.abort();
    }
    expect(seen).toEqual(ids.map((id) => `upsert sites/${id}`));
    expect(sent.length).toBe(2);
    expect(sent.every((s) => new URL(s.url).searchParams.get('live') === 'true')).toBe(true);
    // The reconnect asked from the last position of the first stream, not from the start.
    expect(new URL(sent[1]!.url).searchParams.get('cursor')).not.toBe(null);
    expect(Date.now() - started).toBeGreaterThan(2_000);
  });

  // Last: it changes the company's generation, as a rebuild does.
  test('a rebuild during a stream ends it with sync_window_expired: SyncWindowExpiredError, and so does its position after', async () => {
    const { position } = await pagedChanges(short.baseUrl);
    const { client } = recordingClient(short.baseUrl);
    const live = collect(client.stream({ from: position, live: true }));
    live.catch(() => undefined); // awaited below, once the rebuild is done
    await new Promise((resolve) => setTimeout(resolve, 300));
    const db = openWriter(companyPath(f.dataDir, COMPANY.A));
    db.prepare('UPDATE meta SET created_us = created_us + 1').run();
    db.close();
    commit([site('00000000-0000-4000-8ddd-000000000003', 'after the rebuild')]);
    await expect(live).rejects.toBeInstanceOf(SyncWindowExpiredError);
    await expect(collect(client.stream({ from: position }))).rejects.toBeInstanceOf(SyncWindowExpiredError);
  });
});
