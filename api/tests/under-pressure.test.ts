import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { sheddingLog } from '../src/rate-limit/overload-answer.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

/**
 * Overload shedding (api/README.md, "Rate limiting and overload"): with the heap threshold forced
 * below any real heap, every request is answered 503 service_unavailable with Retry-After, as a
 * problem document carrying the RateLimit-* headers like every answer; with the default thresholds
 * nothing is shed.
 */

let f: Fixture;
let app: FastifyInstance | undefined;

beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** under-pressure judges the last sample; wait (bounded) for the first one after start. */
async function untilUnderPressure(instance: FastifyInstance): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!instance.isUnderPressure()) {
    if (Date.now() > deadline) throw new Error('under-pressure never sampled the heap');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('503 service_unavailable under overload', () => {
  test.each([
    { name: 'anonymous health', url: '/v1/health', key: undefined },
    { name: 'keyed collection', url: '/v1/sites', key: 'a' as const },
    { name: 'unknown path', url: '/v1/nowhere', key: undefined },
  ])('$name', async ({ url, key }) => {
    app = await testApp(f.dataDir, {
      env: {
        API_MAX_HEAP_USED_BYTES: '1',
        API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '100',
        API_UNDER_PRESSURE_RETRY_AFTER_S: '7',
        API_RATE_LIMIT_MAX: '50',
      },
    });
    await untilUnderPressure(app);
    const response = await app.inject({ url, ...(key ? { headers: bearer(f.keys[key]) } : {}) });
    expect(response.statusCode).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toBe('7');
    const body = response.json();
    expect(body.code).toBe('service_unavailable');
    expect(body.status).toBe(503);
    expect(body.request_id).toBe(response.headers['x-request-id']);
    expect(response.headers['ratelimit-limit']).toBe('50');
    expect(response.headers['ratelimit-remaining']).toBe('49');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  test('default thresholds: the same requests are served', async () => {
    app = await testApp(f.dataDir, { env: { API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '100' } });
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(app.isUnderPressure()).toBe(false);
    expect((await app.inject({ url: '/v1/health' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
  });
});

describe('shedding log', () => {
  test('one line per second with the count shed since the last line, not one per request', () => {
    const lines: unknown[] = [];
    const log = { warn: (entry: unknown) => lines.push(entry) } as unknown as FastifyBaseLogger;
    let now = 1_000_000;
    const shedding = sheddingLog(log, () => now);
    shedding.shed('heapUsedBytes', 10);
    for (let i = 0; i < 99; i++) shedding.shed('heapUsedBytes', 10);
    expect(lines).toHaveLength(1);
    now += 1_000;
    shedding.shed('eventLoopDelay', 250);
    expect(lines).toEqual([
      { type: 'heapUsedBytes', value: 10, shed: 1 },
      { type: 'eventLoopDelay', value: 250, shed: 100 },
    ]);
  });
});
