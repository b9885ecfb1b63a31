import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { expectProblem } from './support/conformance.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { GATE_HEADER, type RequestGate, requestGate } from './support/request-gate.ts';
import { bearer, TEST_BASE_URL, testConfig } from './support/test-app.ts';

// Fair shares between keys and companies (api/README.md, "Fair shares"): requests in progress per
// key and per company, held change-feed requests per key, each refused alone with 429
// too_many_requests_in_progress and Retry-After while other tenants are served. Requests are kept
// in progress by a gate before the handler (support/request-gate.ts): a slow page, in effect.

let f: Fixture;
beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());

async function appWith(env: Record<string, string>, gate?: RequestGate): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(f.dataDir, env), {
    logger: false,
    ...(gate ? { plugins: [gate.plugin] } : {}),
  });
  await app.ready();
  return app;
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${what}`);
}

async function refusals(app: FastifyInstance): Promise<Record<string, number>> {
  const metric = await app.metrics.registry.getSingleMetric('pda_api_rate_limited_total')?.get();
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) out[String(v.labels.reason)] = v.value;
  return out;
}

const gated = (key: string, more: Record<string, string> = {}) => ({
  ...bearer(key),
  [GATE_HEADER]: '1',
  ...more,
});

describe('requests in progress', () => {
  test('per key and per company: 429 with Retry-After beyond, other keys and companies served', async () => {
    const gate = requestGate();
    const app = await appWith(
      { API_MAX_IN_PROGRESS_PER_KEY: '2', API_MAX_IN_PROGRESS_PER_COMPANY: '3' },
      gate,
    );
    try {
      const slow = [
        app.inject({ url: '/v1/sites', headers: gated(f.keys.a) }),
        app.inject({ url: '/v1/services', headers: gated(f.keys.a) }),
      ];
      await until(() => gate.waiting() === 2, 'two requests of key a in progress');
      expect(app.fairShares.counts(f.keyIds.a).inProgress).toBe(2);

      const refused = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
      expectProblem(refused, 'listSites', 429, 'too_many_requests_in_progress');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['ratelimit-limit']).toBeDefined();
      expect(refused.json().detail).toContain('This API key has 2 requests in progress');
      // Another company's key, and another key of the same company, are served.
      expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.b) })).statusCode).toBe(200);
      const multiA = { ...bearer(f.keys.multi), 'x-service-company': COMPANY.A };
      expect((await app.inject({ url: '/v1/me', headers: multiA })).statusCode).toBe(200);

      // The company's third: company A is full, for every key that reads it; company B is not.
      slow.push(app.inject({ url: '/v1/sites', headers: { ...multiA, [GATE_HEADER]: '1' } }));
      await until(() => gate.waiting() === 3, 'three requests of company A in progress');
      const company = await app.inject({ url: '/v1/equipment', headers: multiA });
      expectProblem(company, 'listEquipment', 429, 'too_many_requests_in_progress');
      expect(company.json().detail).toContain('The keys of this company have 3 requests in progress');
      const multiB = { ...bearer(f.keys.multi), 'x-service-company': COMPANY.B };
      expect((await app.inject({ url: '/v1/sites', headers: multiB })).statusCode).toBe(200);

      gate.open();
      for (const answer of await Promise.all(slow)) expect(answer.statusCode).toBe(200);
      expect(app.fairShares.counts(f.keyIds.a).inProgress).toBe(0);
      expect(app.fairShares.counts(f.keyIds.multi).inProgress).toBe(0);
      expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
      expect(await refusals(app)).toMatchObject({ in_progress_per_key: 1, in_progress_per_company: 1 });
      expect((await refusals(app)).rate_limit_exceeded).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  test('released once whatever the answer: errors, 404s, 304s, and none counted for anonymous or refused keys', async () => {
    const app = await appWith({ API_MAX_IN_PROGRESS_PER_KEY: '1' });
    try {
      const answers = [
        await app.inject({ url: '/v1/sites?limit=abc', headers: bearer(f.keys.a) }),
        await app.inject({ url: `/v1/sites/${f.ids.B.sites[0]}`, headers: bearer(f.keys.a) }),
        await app.inject({ url: '/v1/sites?cursor=forged', headers: bearer(f.keys.a) }),
        await app.inject({ url: '/v1/health' }),
        await app.inject({ url: '/v1/sites', headers: bearer(f.keys.expired) }),
      ];
      expect(answers.map((a) => a.statusCode)).toEqual([400, 404, 400, 200, 401]);
      const since = '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z';
      const first = await app.inject({ url: since, headers: bearer(f.keys.a) });
      const notModified = await app.inject({
        url: since,
        headers: { ...bearer(f.keys.a), 'if-none-match': String(first.headers.etag) },
      });
      expect(notModified.statusCode).toBe(304);
      // One at a time, each released before the next: a share of 1 never refused them.
      for (let i = 0; i < 5; i++)
        expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
      expect(app.fairShares.counts(f.keyIds.a).inProgress).toBe(0);
      expect(app.fairShares.counts(f.keyIds.expired).inProgress).toBe(0);
    } finally {
      await app.close();
    }
  });

  test('a client that goes away gives its share back', async () => {
    const gate = requestGate();
    const app = await appWith({ API_MAX_IN_PROGRESS_PER_KEY: '1' }, gate);
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const request = httpGet({ host: '127.0.0.1', port, path: '/v1/sites', headers: gated(f.keys.a) });
      request.on('error', () => undefined);
      await until(() => gate.waiting() === 1, 'the request in progress');
      expectProblem(
        await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) }),
        'listSites',
        429,
        'too_many_requests_in_progress',
      );
      request.destroy();
      await until(() => app.fairShares.counts(f.keyIds.a).inProgress === 0, 'the share given back');
      expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
      gate.open();
    } finally {
      await app.close();
    }
  });

  test('0 turns the bounds off', async () => {
    const gate = requestGate();
    const app = await appWith(
      { API_MAX_IN_PROGRESS_PER_KEY: '0', API_MAX_IN_PROGRESS_PER_COMPANY: '0' },
      gate,
    );
    try {
      const slow = Array.from({ length: 20 }, () =>
        app.inject({ url: '/v1/sites', headers: gated(f.keys.a) }),
      );
      await until(() => gate.waiting() === 20, 'twenty requests in progress');
      expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
      gate.open();
      await Promise.all(slow);
    } finally {
      await app.close();
    }
  });
});

describe('held change-feed requests', () => {
  const local = (url: string) => url.replace(TEST_BASE_URL, '');

  async function caughtUp(app: FastifyInstance, key: string): Promise<string> {
    const page = await app.inject({
      url: '/v1/changes?filter[type]=consumables&limit=200',
      headers: bearer(key),
    });
    expect(page.json().meta.page.has_more).toBe(false);
    return local(page.json().links.next as string);
  }

  async function heldGauge(app: FastifyInstance): Promise<number> {
    const text = await app.metrics.registry.getSingleMetricAsString('pda_api_held_requests');
    return Number(/^pda_api_held_requests (\d+)$/m.exec(text)?.[1]);
  }

  test('a key beyond its share gets 429, another company’s key is still held; the process’s cap stays 503', async () => {
    const app = await appWith({
      API_MAX_HELD_REQUESTS: '3',
      API_MAX_HELD_REQUESTS_PER_KEY: '2',
      API_MAX_IN_PROGRESS_PER_KEY: '1',
    });
    const a = await caughtUp(app, f.keys.a);
    const b = await caughtUp(app, f.keys.b);
    // One after the other: each is in progress (a share of 1) until it is held.
    const held = [app.inject({ url: `${a}&wait=30`, headers: bearer(f.keys.a) })];
    await until(async () => (await heldGauge(app)) === 1, 'one of key a held');
    held.push(app.inject({ url: `${a}&wait=30`, headers: bearer(f.keys.a) }));
    await until(async () => (await heldGauge(app)) === 2, 'two of key a held');
    expect(app.fairShares.counts(f.keyIds.a)).toEqual({ inProgress: 0, held: 2, streams: 0 });

    const third = await app.inject({ url: `${a}&wait=30`, headers: bearer(f.keys.a) });
    expectProblem(third, 'listChanges', 429, 'too_many_requests_in_progress');
    expect(third.headers['retry-after']).toBe('1');
    expect(third.json().detail).toContain('2 change-feed requests waiting');
    // Held requests are not in progress: key a's share of 1 still serves its pages.
    expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    expect((await app.inject({ url: a, headers: bearer(f.keys.a) })).statusCode).toBe(200);

    held.push(app.inject({ url: `${b}&wait=30`, headers: bearer(f.keys.b) }));
    await until(async () => (await heldGauge(app)) === 3, 'key b held beside them');
    // The process is full now: the next one is everyone's 503, as before.
    expectProblem(
      await app.inject({ url: `${b}&wait=30`, headers: bearer(f.keys.b) }),
      'listChanges',
      503,
      'service_unavailable',
    );
    expect(app.fairShares.counts(f.keyIds.b)).toEqual({ inProgress: 0, held: 1, streams: 0 });
    expect(await refusals(app)).toMatchObject({ held_per_key: 1, held_per_process: 1 });

    await app.close();
    for (const answer of await Promise.all(held)) expect(answer.statusCode).toBe(200);
    expect(app.fairShares.counts(f.keyIds.a)).toEqual({ inProgress: 0, held: 0, streams: 0 });
    expect(app.fairShares.counts(f.keyIds.b)).toEqual({ inProgress: 0, held: 0, streams: 0 });
  });
});
