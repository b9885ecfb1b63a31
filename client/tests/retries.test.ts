import { type ClientRequest, get as httpGet } from 'node:http';
import { createFixture, type Fixture } from '@pda/api/testing';
import { freePort } from '@pda/projections/testing';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createClient, type RetryEvent } from '../src/index.ts';
import { type RunningApi, startApi } from './support/api-server.ts';
import { type Failure, type FlakyProxy, startFlakyProxy } from './support/flaky-proxy.ts';

// Retries over real HTTP: the api's own 429s with Retry-After (a budget of 2 requests per 2 s; a
// key's one held change-feed slot taken by another follower: too_many_requests_in_progress),
// and 5xx answers and cut connections from a node:http proxy in front of the api (its links point
// at the proxy, as behind a load balancer). Other errors, and exhausted attempts, throw ApiError;
// an AbortSignal ends a wait.

let f: Fixture;
beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());

let api: RunningApi | undefined;
let proxy: FlakyProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await api?.close();
  proxy = undefined;
  api = undefined;
});

/** The api behind a proxy that answers `failures` first. */
async function apiBehindProxy(
  failures: Failure[],
  options: { repeatLast?: boolean } = {},
): Promise<FlakyProxy> {
  const port = await freePort();
  proxy = await startFlakyProxy(() => `http://127.0.0.1:${port}`, failures, options);
  api = await startApi(f.dataDir, { port, publicBaseUrl: proxy.url });
  return proxy;
}

async function exportSiteIds(baseUrl: string, events: RetryEvent[], retry = {}, signal?: AbortSignal) {
  const client = createClient({
    baseUrl,
    apiKey: f.keys.a,
    retry: { baseDelayMs: 20, ...retry },
    onRetry: (event) => events.push(event),
    ...(signal ? { signal } : {}),
  });
  const ids: string[] = [];
  for await (const site of client.exportAll('sites', { query: { limit: 1 } })) ids.push(site.id);
  return ids;
}

describe('429 rate_limit_exceeded', () => {
  test('waits for Retry-After, then goes on where it was', async () => {
    api = await startApi(f.dataDir, { env: { API_RATE_LIMIT_MAX: '2', API_RATE_LIMIT_WINDOW_MS: '2000' } });
    const events: RetryEvent[] = [];
    const started = Date.now();
    expect(await exportSiteIds(api.baseUrl, events)).toEqual(f.ids.A.sites);
    expect(events.map((e) => e.status)).toEqual([429]);
    expect(events[0]?.url).toContain('cursor=');
    // Retry-After is whole seconds (1 or 2 here): the client waited at least that long.
    expect(events[0]?.delayMs).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  test('with attempts exhausted: ApiError 429 rate_limit_exceeded', async () => {
    api = await startApi(f.dataDir, { env: { API_RATE_LIMIT_MAX: '1', API_RATE_LIMIT_WINDOW_MS: '60000' } });
    const error = await exportSiteIds(api.baseUrl, [], { maxAttempts: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
  });
});

describe('429 too_many_requests_in_progress', () => {
  /** A held `wait` request of key a (over HTTP, outside the client), holding the key's one held slot. */
  async function holdOne(position: string): Promise<ClientRequest> {
    const url = new URL(position);
    url.searchParams.set('wait', '30');
    const holder = httpGet(url, { headers: { authorization: `Bearer ${f.keys.a}` } });
    holder.on('error', () => undefined);
    // Held once its key's share is taken: the client's own wait is refused from then on.
    const probe = createClient({ baseUrl: api!.baseUrl, apiKey: f.keys.a, retry: { maxAttempts: 1 } });
    for (let i = 0; i < 200; i++) {
      const refused = await secondPage(probe, position).then(
        () => false,
        (error: unknown) => error instanceof ApiError && error.code === 'too_many_requests_in_progress',
      );
      if (refused) return holder;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the holder was never held');
  }

  /** follow's first page from a position is asked without `wait`; the second, caught up, with it. */
  async function secondPage(client: ReturnType<typeof createClient>, position: string) {
    const pages = client.follow({ from: position, wait: 1 });
    await pages.next();
    return pages.next();
  }

  async function caughtUp(): Promise<string> {
    const client = createClient({ baseUrl: api!.baseUrl, apiKey: f.keys.a });
    let position = '';
    for await (const page of client.follow({ untilCaughtUp: true })) position = page.position;
    return position;
  }

  test('a wait beyond the key’s share of held requests is retried after Retry-After', async () => {
    api = await startApi(f.dataDir, { env: { API_MAX_HELD_REQUESTS_PER_KEY: '1' } });
    const position = await caughtUp();
    const holder = await holdOne(position);
    const events: RetryEvent[] = [];
    const client = createClient({
      baseUrl: api.baseUrl,
      apiKey: f.keys.a,
      retry: { baseDelayMs: 20 },
      onRetry: (event) => {
        events.push(event);
        holder.destroy(); // the other follower goes away: its slot is free for the retry
      },
    });
    const page = await secondPage(client, position);
    expect(page.done).toBe(false);
    expect(events.map((e) => e.status)).toEqual([429]);
    // Retry-After: 1 was honoured, not the 20 ms backoff.
    expect(events[0]?.delayMs).toBeGreaterThanOrEqual(1000);
  });

  test('with attempts exhausted: ApiError 429 too_many_requests_in_progress', async () => {
    api = await startApi(f.dataDir, { env: { API_MAX_HELD_REQUESTS_PER_KEY: '1' } });
    const holder = await holdOne(await caughtUp());
    try {
      const client = createClient({ baseUrl: api.baseUrl, apiKey: f.keys.a, retry: { maxAttempts: 1 } });
      const error = await secondPage(client, await caughtUp()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 429, code: 'too_many_requests_in_progress' });
    } finally {
      holder.destroy();
    }
  });
});

describe('5xx and network errors', () => {
  test('a 503 and a 500 are retried with backoff, then the export completes', async () => {
    const p = await apiBehindProxy([{ status: 503 }, { status: 500 }]);
    const events: RetryEvent[] = [];
    expect(await exportSiteIds(p.url, events)).toEqual(f.ids.A.sites);
    expect(events.map((e) => [e.attempt, e.status])).toEqual([
      [1, 503],
      [2, 500],
    ]);
    expect(p.requests).toHaveLength(5); // 2 failures + 3 pages
    expect(p.requests.slice(3).every((url) => url.includes('cursor='))).toBe(true);
  });

  test('a 503 with Retry-After waits that long', async () => {
    const p = await apiBehindProxy([{ status: 503, retryAfter: '1' }]);
    const events: RetryEvent[] = [];
    expect(await exportSiteIds(p.url, events)).toEqual(f.ids.A.sites);
    expect(events[0]?.delayMs).toBeGreaterThanOrEqual(1000);
  });

  test('a connection cut before any answer is retried', async () => {
    const p = await apiBehindProxy(['cut-connection']);
    const events: RetryEvent[] = [];
    expect(await exportSiteIds(p.url, events)).toEqual(f.ids.A.sites);
    expect(events).toHaveLength(1);
    expect(events[0]?.status).toBeUndefined();
    expect(events[0]?.error).toBeInstanceOf(Error);
  });

  test('attempts are bounded: after maxAttempts the last answer is thrown (a non-problem body too)', async () => {
    const p = await apiBehindProxy([{ status: 502, html: true }], { repeatLast: true });
    const error = await exportSiteIds(p.url, [], { maxAttempts: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, code: undefined, problem: undefined });
    expect(p.requests).toHaveLength(3);
  });

  test('an AbortSignal ends a wait at once, with its reason', async () => {
    const p = await apiBehindProxy([{ status: 503, retryAfter: '30' }], { repeatLast: true });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const error = await exportSiteIds(p.url, [], {}, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(p.requests).toHaveLength(1);
  });
});
