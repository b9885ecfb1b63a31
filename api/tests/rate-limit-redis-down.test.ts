import { freePort } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WindowCounter } from '../src/rate-limit/window-counter.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

/**
 * API_REDIS_URL set but Redis unreachable (no process listens on the port): the api starts, keeps
 * answering (never a 500) and keeps limiting with per-process budgets — the documented fallback
 * (api/README.md, "Rate limiting and overload"). The shared-budget behaviour with a real Redis is in
 * rate-limit-redis.e2e.test.ts.
 */

const MAX = 3;
let f: Fixture;
let app: FastifyInstance;

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, {
    env: {
      API_REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      API_RATE_LIMIT_MAX: String(MAX),
      API_RATE_LIMIT_WINDOW_MS: '60000',
    },
  });
}, 20_000);
afterAll(async () => {
  await app?.close();
  f.cleanup();
});

describe('Redis unreachable', () => {
  test('requests are answered with the headers and still limited per process', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < MAX + 2; i++) {
      const response = await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) });
      statuses.push(response.statusCode);
      expect(response.headers['ratelimit-limit']).toBe(String(MAX));
      expect(response.headers['ratelimit-remaining']).toBe(String(Math.max(0, MAX - i - 1)));
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const health = await app.inject({ url: '/v1/health' });
    expect(health.statusCode).toBe(200);
    expect(health.headers['ratelimit-remaining']).toBe(String(MAX - 1));
  });
});

describe('WindowCounter (the in-process budget)', () => {
  test('counts per key within a window, restarts after it, evicts the least recently used key', () => {
    let now = 0;
    const counter = new WindowCounter(2, () => now);
    expect(counter.increment('a', 1_000)).toEqual({ current: 1, ttl: 1_000 });
    now = 400;
    expect(counter.increment('a', 1_000)).toEqual({ current: 2, ttl: 600 });
    expect(counter.read('a', 1_000)).toEqual({ current: 2, ttl: 600 });
    expect(counter.increment('b', 1_000)).toEqual({ current: 1, ttl: 1_000 });
    now = 1_000;
    expect(counter.increment('a', 1_000)).toEqual({ current: 1, ttl: 1_000 });
    // 'b' is now the least recently used: a third key evicts it, and it starts over.
    counter.increment('c', 1_000);
    expect(counter.read('b', 1_000)).toEqual({ current: 0, ttl: 0 });
    expect(counter.read('a', 1_000)).toEqual({ current: 1, ttl: 1_000 });
  });

  test('refunds: at most maxRefunds per window, counted anew in the next window', () => {
    let now = 0;
    const counter = new WindowCounter(10, () => now);
    for (let n = 0; n < 4; n++) counter.increment('k', 1_000);
    expect(counter.refund('k', 1_000, 2)).toEqual({ current: 3, ttl: 1_000, refunded: true });
    expect(counter.refund('k', 1_000, 2)).toEqual({ current: 2, ttl: 1_000, refunded: true });
    expect(counter.refund('k', 1_000, 2)).toEqual({ current: 2, ttl: 1_000, refunded: false });
    now = 1_000;
    counter.increment('k', 1_000);
    expect(counter.refund('k', 1_000, 2)).toEqual({ current: 0, ttl: 1_000, refunded: true });
    // Nothing to give back: the window holds no request.
    expect(counter.refund('k', 1_000, 2)).toEqual({ current: 0, ttl: 1_000, refunded: false });
    expect(counter.refund('unknown', 1_000, 2)).toEqual({ current: 0, ttl: 0, refunded: false });
  });

  test('each result is a snapshot: later increments do not change an earlier answer', () => {
    const counter = new WindowCounter(10);
    const first = counter.increment('k', 60_000);
    counter.increment('k', 60_000);
    expect(first.current).toBe(1);
  });
});
