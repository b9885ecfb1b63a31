import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { COMPANY, createFixture, type Fixture, uuid } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

/**
 * Rate limiting through the whole app (docs/public-data-api-v1.md, "Limits"): the RateLimit-* headers on
 * every kind of answer, 429 rate_limit_exceeded with Retry-After, one budget per key shared by
 * routes, companies and concurrent workers, per client IP without a known key.
 */

const MAX = 5;
const WINDOW_MS = 60_000;

let f: Fixture;
let app: FastifyInstance;

beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());
afterEach(async () => {
  vi.useRealTimers();
  await app?.close();
});

async function freshApp(): Promise<FastifyInstance> {
  app = await testApp(f.dataDir, {
    env: { API_RATE_LIMIT_MAX: String(MAX), API_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) },
  });
  return app;
}

function limitHeaders(response: LightMyRequestResponse) {
  return {
    limit: response.headers['ratelimit-limit'],
    remaining: response.headers['ratelimit-remaining'],
    reset: response.headers['ratelimit-reset'],
  };
}

function expectLimitHeaders(response: LightMyRequestResponse, remaining: number) {
  const headers = limitHeaders(response);
  expect(headers.limit).toBe(String(MAX));
  expect(headers.remaining).toBe(String(remaining));
  const reset = Number(headers.reset);
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThan(0);
  expect(reset).toBeLessThanOrEqual(WINDOW_MS / 1000);
}

describe('RateLimit-* headers on every answer', () => {
  const cases: { name: string; status: number; request: () => InjectOptions }[] = [
    { name: '200 item', status: 200, request: () => ({ url: '/v1/me', headers: bearer(f.keys.a) }) },
    { name: '200 collection', status: 200, request: () => ({ url: '/v1/sites', headers: bearer(f.keys.a) }) },
    { name: '200 health (anonymous)', status: 200, request: () => ({ url: '/v1/health' }) },
    { name: '401 missing key', status: 401, request: () => ({ url: '/v1/sites' }) },
    {
      name: '401 unknown key',
      status: 401,
      request: () => ({ url: '/v1/sites', headers: bearer('svc_pk_nope') }),
    },
    {
      name: '401 expired key',
      status: 401,
      request: () => ({ url: '/v1/me', headers: bearer(f.keys.expired) }),
    },
    {
      name: '403 missing scope',
      status: 403,
      request: () => ({ url: '/v1/sites', headers: bearer(f.keys.noScopes) }),
    },
    {
      name: '404 unknown record',
      status: 404,
      request: () => ({ url: `/v1/sites/${uuid(0x99, 1)}`, headers: bearer(f.keys.a) }),
    },
    {
      name: '404 record of another company',
      status: 404,
      request: () => ({ url: `/v1/sites/${f.ids.B.sites[0]}`, headers: bearer(f.keys.a) }),
    },
    {
      name: '404 unknown path',
      status: 404,
      request: () => ({ url: '/v1/nowhere', headers: bearer(f.keys.a) }),
    },
    { name: '404 outside /v1', status: 404, request: () => ({ url: '/' }) },
    {
      name: '405 wrong method',
      status: 405,
      request: () => ({ method: 'DELETE', url: '/v1/sites', headers: bearer(f.keys.a) }),
    },
    {
      name: '405 QUERY without Content-Type (Fastify would refuse it with its own 400 first)',
      status: 405,
      request: () => ({ method: 'QUERY', url: '/v1/sites', headers: bearer(f.keys.a) }),
    },
    {
      name: '404 QUERY on an unknown path',
      status: 404,
      request: () => ({ method: 'QUERY', url: '/v1/nowhere' }),
    },
    {
      name: '405 POST with a body of an unsupported media type',
      status: 405,
      request: () => ({
        method: 'POST',
        url: '/v1/sites',
        headers: { ...bearer(f.keys.a), 'content-type': 'text/x-unknown' },
        payload: 'x',
      }),
    },
    {
      name: '400 invalid parameter',
      status: 400,
      request: () => ({ url: '/v1/sites?limit=abc', headers: bearer(f.keys.a) }),
    },
    {
      name: '400 unknown parameter',
      status: 400,
      request: () => ({ url: '/v1/sites?colour=red', headers: bearer(f.keys.a) }),
    },
    {
      name: '400 malformed URL',
      status: 400,
      request: () => ({ url: '/v1/sites/%E0%A4%A', headers: bearer(f.keys.a) }),
    },
  ];

  test.each(cases)('$name', async ({ status, request }) => {
    await freshApp();
    const response = await app.inject(request());
    expect(response.statusCode).toBe(status);
    expectLimitHeaders(response, MAX - 1);
  });
});

describe('429 rate_limit_exceeded', () => {
  test('after the quota: problem document, Retry-After, remaining 0; the budget counts down first', async () => {
    await freshApp();
    for (let i = 1; i <= MAX; i++) {
      const ok = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
      expect(ok.statusCode).toBe(200);
      expectLimitHeaders(ok, MAX - i);
    }
    const refused = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = refused.json();
    expect(body.code).toBe('rate_limit_exceeded');
    expect(body.status).toBe(429);
    expect(body.request_id).toBe(refused.headers['x-request-id']);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(limitHeaders(refused).remaining).toBe('0');
    expect(limitHeaders(refused).limit).toBe(String(MAX));
  });

  test('every way of spending a budget answers the same 429: a route, an unknown path, a malformed URL', async () => {
    await freshApp();
    for (let i = 0; i < MAX; i++) await app.inject({ url: '/v1/health' });
    const answers = [
      await app.inject({ url: '/v1/health' }),
      await app.inject({ url: '/v1/nowhere' }),
      await app.inject({ url: '/v1/sites/%E0%A4%A' }),
    ];
    const documents = answers.map((answer) => {
      expect(answer.statusCode).toBe(429);
      expect(answer.headers['retry-after']).toBe(answers[0]!.headers['retry-after']);
      const { type, title, detail, code } = answer.json();
      return { type, title, detail, code };
    });
    expect(documents[0]!.detail).toMatch(/spent; retry in \d+ s\.$/);
    expect(documents[1]).toEqual(documents[0]);
    expect(documents[2]).toEqual(documents[0]);
  });

  test('the window closes: the budget is whole again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await freshApp();
    for (let i = 0; i < MAX; i++) await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) });
    expect((await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) })).statusCode).toBe(429);
    vi.setSystemTime(Date.now() + WINDOW_MS + 1);
    const again = await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) });
    expect(again.statusCode).toBe(200);
    expectLimitHeaders(again, MAX - 1);
  });
});

describe('one budget per key', () => {
  test('two keys have separate budgets', async () => {
    await freshApp();
    for (let i = 0; i < MAX; i++) await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
    expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(429);
    const other = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.b) });
    expect(other.statusCode).toBe(200);
    expectLimitHeaders(other, MAX - 1);
  });

  test('every route, every answer and every company of a key spend the same budget', async () => {
    await freshApp();
    const requests = [
      { url: '/v1/sites', headers: bearer(f.keys.multi), company: 'A' },
      { url: '/v1/services', headers: bearer(f.keys.multi), company: 'B' },
      { url: '/v1/sites?limit=abc', headers: bearer(f.keys.multi), company: 'A' },
      { url: `/v1/equipment/${uuid(0x99, 2)}`, headers: bearer(f.keys.multi), company: 'B' },
    ] as const;
    let remaining = MAX;
    for (const { url, headers, company } of requests) {
      const response = await app.inject({
        url,
        headers: { ...headers, 'x-service-company': COMPANY[company] },
      });
      remaining -= 1;
      expectLimitHeaders(response, remaining);
    }
  });

  test('concurrent workers on one key share one budget: exactly MAX answered, the rest 429', async () => {
    await freshApp();
    const responses = await Promise.all(
      Array.from({ length: MAX * 3 }, () =>
        app.inject({ url: '/v1/sites?limit=1', headers: bearer(f.keys.a) }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(MAX);
    expect(statuses.filter((status) => status === 429)).toHaveLength(MAX * 2);
    const remainders = responses
      .filter((response) => response.statusCode === 200)
      .map((response) => Number(response.headers['ratelimit-remaining']))
      .sort();
    expect(remainders).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('per client IP without a known key', () => {
  test('health, version, unauthenticated calls and unknown paths share the address budget; keyed calls do not', async () => {
    await freshApp();
    const from = (remoteAddress: string) => ({ remoteAddress });
    await app.inject({ url: '/v1/health', ...from('192.0.2.10') });
    await app.inject({ url: '/v1/version', ...from('192.0.2.10') });
    await app.inject({ url: '/v1/sites', ...from('192.0.2.10') });
    const keyed = await app.inject({ url: '/v1/me', headers: bearer(f.keys.a), ...from('192.0.2.10') });
    expectLimitHeaders(keyed, MAX - 1);
    const unknownPath = await app.inject({ url: '/v1/nowhere', ...from('192.0.2.10') });
    expectLimitHeaders(unknownPath, MAX - 4);
    const otherAddress = await app.inject({ url: '/v1/health', ...from('192.0.2.11') });
    expectLimitHeaders(otherAddress, MAX - 1);
  });

  test('an exhausted address budget answers 429 on health too; the key budget is untouched', async () => {
    await freshApp();
    for (let i = 0; i < MAX; i++) await app.inject({ url: '/v1/sites', remoteAddress: '192.0.2.20' });
    const health = await app.inject({ url: '/v1/health', remoteAddress: '192.0.2.20' });
    expect(health.statusCode).toBe(429);
    expect(health.json().code).toBe('rate_limit_exceeded');
    const keyed = await app.inject({ url: '/v1/me', headers: bearer(f.keys.a), remoteAddress: '192.0.2.20' });
    expect(keyed.statusCode).toBe(200);
  });

  test('IPv6 clients are metered per /64', async () => {
    await freshApp();
    await app.inject({ url: '/v1/health', remoteAddress: '2001:db8:1:2::10' });
    const sameNetwork = await app.inject({ url: '/v1/health', remoteAddress: '2001:db8:1:2::99' });
    expectLimitHeaders(sameNetwork, MAX - 2);
    const otherNetwork = await app.inject({ url: '/v1/health', remoteAddress: '2001:db8:1:3::10' });
    expectLimitHeaders(otherNetwork, MAX - 1);
  });
});
