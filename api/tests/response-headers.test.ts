import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { companyPath } from '@pda/projections/model';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { expectConforms } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Response headers that keep one tenant's answers out of shared caches (api/README.md, "Response
// headers"): every answer to a key and every problem is `Cache-Control: private, no-store` and
// `Vary: Authorization, X-Service-Company` (appended to any other Vary), every answer `nosniff`.

let f: Fixture;
let app: FastifyInstance;
const extra: FastifyInstance[] = [];

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: '100000' } });
});
afterEach(async () => {
  for (const other of extra.splice(0)) await other.close();
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

/** Vary's names, lower-cased, in order. */
function varyOf(headers: Record<string, unknown>): string[] {
  const value = headers.vary;
  return String(Array.isArray(value) ? value.join(',') : (value ?? ''))
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
}

function expectPrivate(response: { statusCode: number; headers: Record<string, unknown> }, label: string) {
  expect(response.headers['cache-control'], label).toBe('private, no-store');
  expect(response.headers['x-content-type-options'], label).toBe('nosniff');
  const vary = varyOf(response.headers);
  expect(vary, label).toEqual(expect.arrayContaining(['authorization', 'x-service-company']));
  expect(new Set(vary).size, `${label}: a name listed twice in ${vary.join(', ')}`).toBe(vary.length);
}

const get = (url: string, headers: Record<string, string> = {}, on = app) => on.inject({ url, headers });

describe('private answers: every endpoint family', () => {
  test('200 list, 200 item, 200 identity and deletions, 304', async () => {
    const a = bearer(f.keys.a);
    const cases: [string, LightMyRequestResponse, string][] = [
      ['200 list', await get('/v1/sites', a), 'listSites'],
      ['200 item', await get(`/v1/sites/${f.ids.A.sites[0]}`, a), 'getSite'],
      ['200 catalogue list', await get('/v1/equipment?include=category', a), 'listEquipment'],
      ['200 me', await get('/v1/me', a), 'getMe'],
      ['200 scopes', await get('/v1/reference/scopes', a), 'listScopes'],
      ['200 deletions', await get('/v1/deletions', a), 'listDeletions'],
    ];
    for (const [label, response, operation] of cases) {
      expect(response.statusCode, label).toBe(200);
      expectPrivate(response, label);
      // The contract declares them required: the conformance check asserts them too.
      expectConforms(response, operation);
    }
    const since = '/v1/sites?filter%5Bupdated_since%5D=2000-01-01T00:00:00Z';
    const first = await get(since, a);
    expect(first.headers.etag).toBeDefined();
    expectPrivate(first, 'page with an ETag');
    const notModified = await get(since, { ...a, 'if-none-match': String(first.headers.etag) });
    expect(notModified.statusCode).toBe(304);
    expectPrivate(notModified, '304');
  });

  test('400, 401, 403, 404 (record and path), 405: problems', async () => {
    const cases: [string, LightMyRequestResponse, number][] = [
      ['400 invalid_parameter', await get('/v1/sites?limit=x', bearer(f.keys.a)), 400],
      ['400 company_selection_required', await get('/v1/sites', bearer(f.keys.multi)), 400],
      ['400 unknown parameter, no key', await get('/v1/health?x=1'), 400],
      ['401 no key', await get('/v1/sites'), 401],
      ['401 expired', await get('/v1/sites', bearer(f.keys.expired)), 401],
      ['403 insufficient_scope', await get('/v1/sites', bearer(f.keys.noScopes)), 403],
      [
        '403 company_not_available',
        await get('/v1/sites', { ...bearer(f.keys.multi), 'x-service-company': COMPANY.C }),
        403,
      ],
      ['404 record', await get(`/v1/sites/${f.ids.B.sites[0]}`, bearer(f.keys.a)), 404],
      ['404 path', await get('/v1/nowhere'), 404],
      ['404 preflight of an unknown path', await app.inject({ method: 'OPTIONS', url: '/v1/nowhere' }), 404],
      ['400 malformed path', await get('/v1/sites/%E0%A4%A'), 400],
      ['405', await app.inject({ method: 'POST', url: '/v1/sites' }), 405],
    ];
    for (const [label, response, status] of cases) {
      expect(response.statusCode, label).toBe(status);
      expect(response.headers['content-type'], label).toMatch(/^application\/problem\+json/);
      expectPrivate(response, label);
    }
  });

  test('429 for a key and for an address (health), and the overload 503', async () => {
    const limited = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: '1' } });
    extra.push(limited);
    await get('/v1/sites', bearer(f.keys.a), limited);
    const key = await get('/v1/sites', bearer(f.keys.a), limited);
    await get('/v1/health', {}, limited);
    const address = await get('/v1/health', {}, limited);
    for (const [label, response] of [
      ['429 key', key],
      ['429 health', address],
    ] as const) {
      expect(response.statusCode, label).toBe(429);
      expectPrivate(response, label);
    }

    const overloaded = await testApp(f.dataDir, {
      env: { API_MAX_HEAP_USED_BYTES: '1', API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '100' },
    });
    extra.push(overloaded);
    const deadline = Date.now() + 5_000;
    while (!overloaded.isUnderPressure() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    for (const [label, response] of [
      ['503 overload, keyed', await get('/v1/sites', bearer(f.keys.a), overloaded)],
      ['503 overload, health', await get('/v1/health', {}, overloaded)],
    ] as const) {
      expect(response.statusCode, label).toBe(503);
      expectPrivate(response, label);
    }
  });

  test('503 for a company whose file is gone', async () => {
    const other = createFixture();
    try {
      const served = await testApp(other.dataDir);
      extra.push(served);
      rmSync(companyPath(other.dataDir, COMPANY.B));
      const response = await get('/v1/sites', bearer(other.keys.b), served);
      expect(response.statusCode).toBe(503);
      expectPrivate(response, '503 company file gone');
      expectConforms(response, 'listSites');
    } finally {
      other.cleanup();
    }
  });
});

describe('Vary is appended to, never replaced', () => {
  test('a compressed page varies on Accept-Encoding and on the key and company, each once', async () => {
    const response = await get('/v1/sites?limit=200&include=contacts', {
      ...bearer(f.keys.a),
      'accept-encoding': 'gzip',
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(varyOf(response.headers)).toEqual(
      expect.arrayContaining(['accept-encoding', 'authorization', 'x-service-company']),
    );
    expectPrivate(response, 'compressed page');
    const problem = await get(`/v1/sites?sort=${'name,'.repeat(30)}id`, {
      ...bearer(f.keys.a),
      'accept-encoding': 'gzip',
    });
    expect(problem.statusCode).toBe(400);
    expectPrivate(problem, 'problem, maybe compressed');
  });
});

describe('health and version', () => {
  test('nosniff, and cacheable: no private Cache-Control', async () => {
    for (const url of ['/v1/health', '/v1/version']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['cache-control'], url).toBeUndefined();
    }
  });

  test('a CORS preflight carries no private headers (it carries no data)', async () => {
    const response = await app.inject({
      method: 'OPTIONS',
      url: '/v1/sites',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['cache-control']).toBeUndefined();
  });
});

describe('answers written to the socket', () => {
  test("a request Node's parser refuses gets the problem headers too", async () => {
    const listening = await testApp(f.dataDir);
    extra.push(listening);
    await listening.listen({ host: '127.0.0.1', port: 0 });
    const port = (listening.server.address() as AddressInfo).port;
    const head = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.end('GET /v1/sites HTTP/1.1\r\nHost test\r\n\r\n'),
      );
      let out = '';
      socket.on('data', (chunk) => {
        out += chunk.toString('utf8');
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(out.split('\r\n\r\n')[0] ?? ''));
    });
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    const headers = Object.fromEntries(
      head
        .split('\r\n')
        .slice(1)
        .map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
    );
    expectPrivate({ statusCode: 400, headers }, 'raw 400');
  });
});
