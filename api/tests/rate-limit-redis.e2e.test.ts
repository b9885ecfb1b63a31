import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

/**
 * One budget shared across api processes (docs/public-data-api-v1.md, "Limits") with a REAL Redis: a
 * redis-server (Debian package `redis-server`) started here on a free port with its own temp dir,
 * two app instances pointed at it. Then Redis is stopped (requests still answered, limited per
 * process) and started again (budgets shared again).
 */

const MAX = 6;
const FREE_304S = 2;
let f: Fixture;
let redisDir: string;
let redisPort: number;
let redisProcess: ChildProcess | undefined;
let apps: FastifyInstance[] = [];

async function startRedis(): Promise<void> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--dir',
      redisDir,
      '--save',
      '',
      '--appendonly',
      'no',
    ],
    { stdio: 'ignore' },
  );
  child.on('error', () => {}); // ENOENT is reported below, as a clear failure
  redisProcess = child;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      throw new Error('redis-server did not start: install the Debian package redis-server');
    }
    const probe = new Redis(redisPort, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error('redis-server did not answer PING within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopRedis(): Promise<void> {
  const child = redisProcess;
  redisProcess = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function get(app: FastifyInstance, key: string) {
  const response = await app.inject({ url: '/v1/sites?limit=1', headers: bearer(key) });
  return { status: response.statusCode, remaining: Number(response.headers['ratelimit-remaining']) };
}

beforeAll(async () => {
  f = createFixture();
  redisDir = mkdtempSync(join(tmpdir(), 'pda-redis-'));
  redisPort = await freePort();
  await startRedis();
  const env = {
    API_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    API_RATE_LIMIT_MAX: String(MAX),
    API_RATE_LIMIT_WINDOW_MS: '60000',
    API_NOT_MODIFIED_FREE_PER_WINDOW: String(FREE_304S),
  };
  apps = [await testApp(f.dataDir, { env }), await testApp(f.dataDir, { env })];
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await stopRedis();
  rmSync(redisDir, { recursive: true, force: true });
  f.cleanup();
});

describe('budget shared through Redis', () => {
  test('two api instances spend one budget per key; another key has its own', async () => {
    const [one, two] = apps as [FastifyInstance, FastifyInstance];
    const seen: { status: number; remaining: number }[] = [];
    for (let i = 0; i < MAX + 2; i++) seen.push(await get(i % 2 === 0 ? one : two, f.keys.a));
    expect(seen.map((entry) => entry.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(seen.map((entry) => entry.remaining)).toEqual([5, 4, 3, 2, 1, 0, 0, 0]);
    expect(await get(two, f.keys.b)).toEqual({ status: 200, remaining: MAX - 1 });
  });

  test('concurrent workers on both instances: exactly MAX answered in all', async () => {
    const responses = await Promise.all(
      Array.from({ length: MAX * 4 }, (_, i) => get(apps[i % 2]!, f.keys.noCategories)),
    );
    expect(responses.filter((entry) => entry.status === 200)).toHaveLength(MAX);
    expect(responses.filter((entry) => entry.status === 429)).toHaveLength(MAX * 3);
  });

  test('304s given back: FREE_304S per key and window across both instances, then they cost a request', async () => {
    const [one, two] = apps as [FastifyInstance, FastifyInstance];
    const headers = { ...bearer(f.keys.multi), 'x-service-company': COMPANY.A };
    const url = '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z';
    const first = await one.inject({ url, headers });
    const etag = String(first.headers.etag);
    const polls = [];
    for (let i = 0; i < MAX + FREE_304S; i++) {
      const poll = await (i % 2 === 0 ? two : one).inject({
        url,
        headers: { ...headers, 'if-none-match': etag },
      });
      polls.push([poll.statusCode, Number(poll.headers['ratelimit-remaining'])]);
    }
    expect(polls).toEqual([
      [304, 5],
      [304, 5],
      [304, 4],
      [304, 3],
      [304, 2],
      [304, 1],
      [304, 0],
      [429, 0],
    ]);
    // The refunds' count expires with the budget's window.
    const probe = new Redis(redisPort, '127.0.0.1');
    try {
      const budgetKey = `pda:rate-limit:key:${f.keyIds.multi}`;
      expect(await probe.get(`${budgetKey}:refunds`)).toBe(String(FREE_304S));
      // Absolute deadlines (Redis 7): the script sets the refunds' expiry to the budget's own.
      const deadline = async (key: string) => Number(await probe.call('PEXPIRETIME', key));
      expect(await deadline(`${budgetKey}:refunds`)).toBeGreaterThan(0);
      expect(await deadline(`${budgetKey}:refunds`)).toBe(await deadline(budgetKey));
    } finally {
      probe.disconnect();
    }
  });

  test('Redis stops: still answered and limited per process; Redis back: shared again', async () => {
    const [one, two] = apps as [FastifyInstance, FastifyInstance];
    await stopRedis();
    // Per-process fallback: each instance allows MAX on its own, nothing is a 500.
    const oneStatuses = [];
    for (let i = 0; i < MAX + 1; i++) oneStatuses.push((await get(one, f.keys.rotating)).status);
    expect(oneStatuses).toEqual([...Array(MAX).fill(200), 429]);
    expect((await get(two, f.keys.rotating)).status).toBe(200);

    await startRedis(); // empty: --save '' keeps nothing
    const probe = new Redis(redisPort, '127.0.0.1');
    try {
      // ioredis reconnects in the background (back-off up to 2 s); wait until a request lands.
      const deadline = Date.now() + 20_000;
      while ((await probe.dbsize()) === 0) {
        if (Date.now() > deadline) throw new Error('the api did not reconnect to Redis within 20 s');
        await get(one, f.keys.expired);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const before = await get(one, f.keys.b);
      const after = await get(two, f.keys.b);
      expect(after.remaining).toBe(before.remaining - 1);
    } finally {
      probe.disconnect();
    }
  });
});
