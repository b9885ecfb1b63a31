import { get as httpGet, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, zstdDecompressSync } from 'node:zlib';
import { companyPath } from '@pda/projections/model';
import { makeUpsert, sampleRow } from '@pda/projections/testing';
import { openWriter, ProjectionStore } from '@pda/projections/write';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectProblem } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, TEST_BASE_URL, testApp } from './support/test-app.ts';

// The change feed as a stream (docs/public-data-api-v1.md, "The change feed as a stream"): the
// same items as its pages, in the same order, each chunk of at most 200 followed by a position
// line whose links.next resumes the walk; live streams stay open, send commits as they land,
// heartbeat and end after their lifetime; SSE's ids resume a reconnecting EventSource.

let f: Fixture;
let app: FastifyInstance;
let lsn = 90_000;

interface Line {
  op: string;
  type?: string;
  id?: string;
  data?: Record<string, unknown>;
  links?: { next: string };
  caught_up?: boolean;
  error?: { code: string };
}

const NDJSON = { accept: 'application/x-ndjson' };
const SSE = { accept: 'text/event-stream' };
const local = (url: string) => url.replace(TEST_BASE_URL, '');
const lines = (body: string): Line[] =>
  body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
const changesOf = (all: Line[]) =>
  all.filter((l) => l.op === 'upsert' || l.op === 'delete').map((l) => `${l.op} ${l.type}/${l.id}`);

function apply(changes: Parameters<ProjectionStore['applyBatch']>[0]): void {
  const store = ProjectionStore.open({ dataDir: f.dataDir });
  store.applyBatch(changes);
  store.close();
}
const site = (id: string, name: string) =>
  makeUpsert('sites', sampleRow('sites', { id, name, company_id: COMPANY.A }), lsn++, { op: 'u' });

/** Every item of the paged feed from `url`, and the last links.next. */
async function paged(url: string, on: FastifyInstance = app): Promise<{ items: string[]; next: string }> {
  const items: string[] = [];
  for (let next = url; ; ) {
    const response = await on.inject({ url: local(next), headers: bearer(f.keys.a) });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json() as {
      data: Line[];
      meta: { page: { has_more: boolean } };
      links: { next: string };
    };
    items.push(...changesOf(body.data));
    next = body.links.next;
    if (!body.meta.page.has_more) return { items, next };
  }
}

async function streamed(url: string, headers: Record<string, string> = NDJSON, on: FastifyInstance = app) {
  const response = await on.inject({ url: local(url), headers: { ...bearer(f.keys.a), ...headers } });
  return response;
}

/** A few hundred sites, so that the walk takes several chunks of 200. */
function addSites(count: number, prefix: string): string[] {
  const ids = Array.from(
    { length: count },
    (_, i) => `00000000-0000-4000-8${prefix}-${String(i).padStart(12, '0')}`,
  );
  apply(ids.map((id, i) => site(id, `${prefix} site ${i}`)));
  return ids;
}

beforeAll(async () => {
  f = createFixture();
  addSites(450, '1aa');
  app = await testApp(f.dataDir, { env: { API_STREAM_HEARTBEAT_S: '1', API_STREAM_MAX_LIFETIME_S: '3' } });
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

describe('GET /v1/changes as an NDJSON stream', () => {
  test('the same items as the pages, in chunks of at most 200, each followed by a position; ends caught up', async () => {
    const response = await streamed('/v1/changes');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const all = lines(response.body);
    const pages = await paged('/v1/changes');
    expect(changesOf(all)).toEqual(pages.items);
    let sinceLast = 0;
    for (const line of all) {
      if (line.op === 'position') sinceLast = 0;
      else expect(++sinceLast).toBeLessThanOrEqual(200);
    }
    const positions = all.filter((l) => l.op === 'position');
    expect(positions.length).toBeGreaterThanOrEqual(3);
    expect(all[all.length - 1]).toEqual({ op: 'position', links: { next: pages.next }, caught_up: true });
    expect(positions.slice(0, -1).every((p) => p.caught_up === false)).toBe(true);
  });

  test('resumed from any position line: exactly the items after it', async () => {
    const all = lines((await streamed('/v1/changes')).body);
    const first = all.findIndex((l) => l.op === 'position');
    const rest = lines((await streamed(all[first]!.links!.next)).body);
    expect(changesOf(rest)).toEqual(changesOf(all.slice(first + 1)));
  });

  test('compressed as negotiated, flushed per chunk: the same lines', async () => {
    const plain = (await streamed('/v1/changes')).body;
    const gzip = await streamed('/v1/changes', { ...NDJSON, 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain);
    const zstd = await streamed('/v1/changes', { ...NDJSON, 'accept-encoding': 'zstd' });
    expect(zstd.headers['content-encoding']).toBe('zstd');
    expect(zstdDecompressSync(zstd.rawPayload).toString()).toBe(plain);
  });

  test('live without a stream, and wait with one, are 400s that say why', async () => {
    expectProblem(
      await app.inject({ url: '/v1/changes?live=true', headers: bearer(f.keys.a) }),
      'listChanges',
      400,
      'invalid_parameter',
    );
    const waiting = await streamed('/v1/changes?wait=5');
    expectProblem(waiting, 'listChanges', 400, 'invalid_parameter');
    expect(waiting.json().errors[0].parameter).toBe('wait');
  });
});

describe('Server-Sent Events', () => {
  test('changes as message events, positions with the cursor as id; Last-Event-ID resumes after it', async () => {
    const response = await streamed('/v1/changes', SSE);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = response.body.split('\n\n').filter((e) => e !== '');
    const parsed = events.map((event) => {
      const fields = Object.fromEntries(
        event
          .split('\n')
          .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
      ) as { event?: string; id?: string; data: string };
      return { ...fields, line: JSON.parse(fields.data) as Line };
    });
    const ndjson = lines((await streamed('/v1/changes')).body);
    expect(parsed.map((e) => e.line)).toEqual(ndjson);
    for (const e of parsed) {
      if (e.line.op === 'position') {
        expect(e.event).toBe('position');
        expect(e.line.links?.next).toContain(`cursor=${encodeURIComponent(e.id ?? '')}`);
      } else expect(e.event).toBeUndefined();
    }
    const firstPosition = parsed.find((e) => e.event === 'position')!;
    const resumed = await streamed('/v1/changes', { ...SSE, 'last-event-id': firstPosition.id! });
    const after = resumed.body
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => JSON.parse(e.slice(6)) as Line);
    expect(changesOf(after)).toEqual(
      changesOf(ndjson.slice(ndjson.findIndex((l) => l.op === 'position') + 1)),
    );
  });

  test('a Last-Event-ID is ignored without text/event-stream (pages, NDJSON)', async () => {
    const page = await app.inject({
      url: '/v1/changes?limit=1',
      headers: { ...bearer(f.keys.a), 'last-event-id': '0' },
    });
    expect(page.statusCode, page.body).toBe(200);
    expect((await streamed('/v1/changes', { ...NDJSON, 'last-event-id': '0' })).statusCode).toBe(200);
  });

  test('a Last-Event-ID that is not ours is a 400 invalid_cursor', async () => {
    expectProblem(
      await streamed('/v1/changes', { ...SSE, 'last-event-id': 'abc.def' }),
      'listChanges',
      400,
      'invalid_cursor',
    );
  });
});

describe('live streams', () => {
  let listening: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    listening = await testApp(f.dataDir, {
      env: { API_STREAM_HEARTBEAT_S: '1', API_STREAM_MAX_LIFETIME_S: '4', API_MAX_STREAMS_PER_KEY: '1' },
    });
    await listening.listen({ host: '127.0.0.1', port: 0 });
    port = (listening.server.address() as AddressInfo).port;
  });
  afterAll(async () => listening.close());

  /** Opens a stream; `seen` collects its lines as they arrive. */
  function open(url: string) {
    const seen: Line[] = [];
    let buffered = '';
    let response: IncomingMessage | undefined;
    const request = httpGet({
      host: '127.0.0.1',
      port,
      path: local(url),
      headers: { ...bearer(f.keys.a), ...NDJSON },
    });
    const ended = new Promise<number>((resolve, reject) => {
      request.on('response', (res) => {
        response = res;
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          buffered += text;
          const parts = buffered.split('\n');
          buffered = parts.pop() ?? '';
          for (const part of parts) if (part !== '') seen.push(JSON.parse(part) as Line);
        });
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      request.on('error', reject);
    });
    return { seen, ended, request, status: () => response?.statusCode };
  }
  const until = async (condition: () => boolean, what: string) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(condition(), what).toBe(true);
  };

  test('caught up, then each commit as it lands, heartbeats meanwhile, and a last position at its lifetime', async () => {
    const { next: caughtUp } = await paged('/v1/changes?filter[type]=sites&limit=200', listening);
    const stream = open(`${caughtUp}&live=true`);
    await until(
      () => stream.seen.some((l) => l.op === 'position' && l.caught_up === true),
      'said it caught up',
    );
    const id = '00000000-0000-4000-8bbb-000000000001';
    apply([site(id, 'landed live')]);
    await until(() => stream.seen.some((l) => l.id === id), 'the commit arrived');
    expect(stream.seen.find((l) => l.id === id)?.data?.name).toBe('landed live');
    await until(() => stream.seen.some((l) => l.op === 'heartbeat'), 'a heartbeat');
    expect(await stream.ended).toBe(200);
    const last = stream.seen[stream.seen.length - 1]!;
    expect(last).toMatchObject({ op: 'position', caught_up: true });
    // Reconnecting from the last position: nothing again.
    const again = lines((await streamed(last.links!.next, NDJSON, listening)).body);
    expect(changesOf(again)).toEqual([]);
  });

  test('a key holds at most API_MAX_STREAMS_PER_KEY streams: the next is a 429', async () => {
    const { next } = await paged('/v1/changes?filter[type]=sites&limit=200', listening);
    const first = open(`${next}&live=true`);
    await until(() => first.seen.length > 0, 'the first stream is open');
    const second = await listening.inject({
      url: local(`${next}&live=true`),
      headers: { ...bearer(f.keys.a), ...NDJSON },
    });
    expectProblem(second, 'listChanges', 429, 'too_many_requests_in_progress');
    first.request.destroy();
    await until(
      () => listening.fairShares.counts(f.keyIds.a).streams === 0,
      'the closed stream released its share',
    );
  });

  test('an open stream is counted by pda_api_open_streams (and holds a slot) until the partner goes away', async () => {
    const gauge = async (name: string) =>
      Number(
        new RegExp(`^${name} (\\d+)$`, 'm').exec(
          await listening.metrics.registry.getSingleMetricAsString(name),
        )?.[1],
      );
    const { next } = await paged('/v1/changes?filter[type]=sites&limit=200', listening);
    expect(await gauge('pda_api_open_streams')).toBe(0);
    const stream = open(`${next}&live=true`);
    await until(() => stream.seen.length > 0, 'the stream is open');
    expect(await gauge('pda_api_open_streams')).toBe(1);
    expect(await gauge('pda_api_held_requests')).toBe(1);
    stream.request.destroy();
    for (let i = 0; i < 200 && (await gauge('pda_api_open_streams')) !== 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(await gauge('pda_api_open_streams')).toBe(0);
    expect(await gauge('pda_api_held_requests')).toBe(0);
  });

  // Last: it leaves the fixture's file on another generation.
  test('a rebuild of the company under a live stream ends it with a sync_window_expired line', async () => {
    const { next } = await paged('/v1/changes?filter[type]=sites&limit=200', listening);
    const stream = open(`${next}&live=true`);
    await until(
      () => stream.seen.some((l) => l.op === 'position' && l.caught_up === true),
      'said it caught up',
    );
    // What a rebuild swaps in: another generation of the file (meta.created_us), with a commit.
    const db = openWriter(companyPath(f.dataDir, COMPANY.A));
    db.prepare('UPDATE meta SET created_us = created_us + 1, last_changed_us = last_changed_us + 1').run();
    db.close();
    expect(await stream.ended).toBe(200);
    expect(stream.seen[stream.seen.length - 1]).toMatchObject({
      op: 'error',
      error: { status: 410, code: 'sync_window_expired' },
    });
  });
});
