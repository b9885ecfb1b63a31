import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { expectConforms } from './support/conformance.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Browsers may call the api (api/README.md, "CORS"): preflights on contract paths answer 204
// without a key, metered per client address; any other OPTIONS is a 400; every answer exposes its
// rate-limit headers. Each test sends from an address of its own (per-address budgets).

const MAX = 3;
let f: Fixture;
let app: FastifyInstance;
beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: String(MAX) } });
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

const PREFLIGHT = {
  origin: 'https://partner.example',
  'access-control-request-method': 'GET',
  'access-control-request-headers': 'authorization, x-service-company',
};
let addresses = 0;
const newAddress = () => `192.0.2.${++addresses}`;

const preflight = (url: string, remoteAddress = newAddress(), headers: Record<string, string> = PREFLIGHT) =>
  app.inject({ method: 'OPTIONS', url, headers, remoteAddress });

const EXPOSED =
  'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, X-Request-Id, ETag, Data-Current-As-Of';

describe('preflight', () => {
  test.each(['/v1/sites', '/v1/sites/00000000-0000-4000-8000-000000000001?include=contacts', '/v1/health'])(
    'OPTIONS %s → 204 with the allowed methods and headers, no key needed',
    async (url) => {
      const response = await preflight(url);
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(response.headers).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, OPTIONS',
        'access-control-allow-headers': 'Authorization, X-Service-Company, If-None-Match',
        'access-control-max-age': '7200',
        allow: 'GET, HEAD, OPTIONS',
      });
      expect(response.headers['x-request-id']).toBeDefined();
      expect(response.headers['ratelimit-limit']).toBe(String(MAX));
    },
  );

  test('preflights are metered per client address: RateLimit-* on each, 429 once it is spent', async () => {
    const address = newAddress();
    const answers = [];
    for (let i = 0; i < MAX + 2; i++) answers.push(await preflight('/v1/sites', address));
    expect(answers.map((answer) => answer.statusCode)).toEqual([204, 204, 204, 429, 429]);
    expect(answers.map((answer) => answer.headers['ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expect(answers[3]?.json().code).toBe('rate_limit_exceeded');
    expect(answers[3]?.headers['retry-after']).toBeDefined();
    // The same budget as every request without a key from that address ...
    expect((await app.inject({ url: '/v1/health', remoteAddress: address })).statusCode).toBe(429);
    // ... not a partner's key budget, nor another address's.
    const keyed = await app.inject({ url: '/v1/me', headers: bearer(f.keys.a), remoteAddress: address });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.headers['ratelimit-remaining']).toBe(String(MAX - 1));
    expect((await preflight('/v1/sites')).statusCode).toBe(204);
  });

  test.each([
    ['no preflight header', {}],
    ['Origin alone', { origin: 'https://partner.example' }],
    ['Access-Control-Request-Method alone', { 'access-control-request-method': 'GET' }],
    ['a key, no preflight header', bearer('svc_pk_anything')],
  ])('any other OPTIONS (%s) → 400 bad_request, metered, no preflight headers', async (_name, headers) => {
    const response = await preflight('/v1/sites', newAddress(), headers);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json().code).toBe('bad_request');
    expect(response.headers['ratelimit-remaining']).toBe(String(MAX - 1));
    expect(response.headers['access-control-allow-methods']).toBeUndefined();
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  test('OPTIONS on an unknown path → the 404 problem, metered like any unknown path', async () => {
    const response = await preflight('/v1/nowhere');
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json().code).toBe('not_found');
    expect(response.headers['ratelimit-limit']).toBe(String(MAX));
    expect(response.headers['access-control-allow-methods']).toBeUndefined();
  });
});

describe('every answer is readable cross-origin, rate-limit headers included', () => {
  test.each([
    ['200', () => app.inject({ url: '/v1/me', headers: bearer(f.keys.b) }), 'getMe'],
    ['401', () => app.inject({ url: '/v1/me', remoteAddress: newAddress() }), 'getMe'],
    ['405', () => app.inject({ method: 'DELETE', url: '/v1/me', headers: bearer(f.keys.b) }), undefined],
  ] as const)('%s', async (_status, send, operation) => {
    const response = await send();
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['access-control-expose-headers']).toBe(EXPOSED);
    if (operation) expectConforms(response, operation);
    else expect(response.headers.allow).toBe('GET, HEAD, OPTIONS');
  });
});
