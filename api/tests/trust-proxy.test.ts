import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { parseTrustProxy } from '../src/connections/trust-proxy.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { testApp } from './support/test-app.ts';

/**
 * API_TRUST_PROXY (docs/deployment-replicas.md, "Client addresses"): behind a balancer, the
 * per-address budget of health and version is the client's (from X-Forwarded-For), believed only
 * from the configured proxy addresses. Seen through RateLimit-Remaining: each address has its own.
 */

const MAX = 10;
const BALANCER = '10.0.0.5';
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

async function appTrusting(trust: string): Promise<FastifyInstance> {
  app = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: String(MAX), API_TRUST_PROXY: trust } });
  return app;
}

async function remaining(remoteAddress: string, xff?: string): Promise<number> {
  const response = await app!.inject({
    url: '/v1/version',
    remoteAddress,
    headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
  });
  expect(response.statusCode).toBe(200);
  return Number(response.headers['ratelimit-remaining']);
}

describe('parseTrustProxy', () => {
  test('booleans, addresses, CIDR ranges and proxy-addr names', () => {
    expect(parseTrustProxy('true')).toEqual({ ok: true, value: true });
    expect(parseTrustProxy('1')).toEqual({ ok: true, value: true });
    expect(parseTrustProxy('false')).toEqual({ ok: true, value: false });
    expect(parseTrustProxy('0')).toEqual({ ok: true, value: false });
    expect(parseTrustProxy(' 10.0.0.5, 10.1.0.0/16 ,fd00::/8,::1,loopback ')).toEqual({
      ok: true,
      value: ['10.0.0.5', '10.1.0.0/16', 'fd00::/8', '::1', 'loopback'],
    });
  });

  test('anything else is refused, naming the bad entries', () => {
    for (const bad of [
      'yes',
      '10.0.0.256',
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/255.0.0.0',
      'proxy.local',
      '10.0.0.5,',
      '2',
    ]) {
      const parsed = parseTrustProxy(bad);
      expect(parsed.ok, bad).toBe(false);
    }
    expect(() =>
      parseConfig({
        API_DATA_DIR: '/d',
        API_CURSOR_SECRET: 's'.repeat(32),
        API_TRUST_PROXY: '10.0.0.5,nope',
      }),
    ).toThrow(/API_TRUST_PROXY: .*not valid: "nope"/);
  });
});

describe('the client address behind a trusted balancer', () => {
  test('from a trusted address, the right-most untrusted X-Forwarded-For entry is the client', async () => {
    await appTrusting(`${BALANCER},10.9.0.0/16`);
    expect(await remaining(BALANCER, '198.51.100.1')).toBe(MAX - 1);
    expect(await remaining(BALANCER, '198.51.100.1')).toBe(MAX - 2);
    // A second client behind the same balancer has its own budget, not the balancer's.
    expect(await remaining(BALANCER, '198.51.100.2')).toBe(MAX - 1);
    // What the client wrote itself (left of the address the balancer appended) is not believed.
    expect(await remaining(BALANCER, '203.0.113.66, 198.51.100.2')).toBe(MAX - 2);
    expect(await remaining(BALANCER, '203.0.113.66')).toBe(MAX - 1);
    // Two trusted hops (a proxy inside 10.9.0.0/16 in front of the balancer): the client is before both.
    expect(await remaining(BALANCER, '198.51.100.1, 10.9.3.3')).toBe(MAX - 3);
  });

  test('from an untrusted address, a spoofed X-Forwarded-For is ignored', async () => {
    await appTrusting(BALANCER);
    expect(await remaining('192.0.2.7', '198.51.100.9')).toBe(MAX - 1);
    expect(await remaining('192.0.2.7', '198.51.100.10')).toBe(MAX - 2);
    // The spoofed addresses' budgets were never spent: the balancer reporting one is its first use.
    expect(await remaining(BALANCER, '198.51.100.9')).toBe(MAX - 1);
  });

  test('false ignores the header; true believes the left-most entry (spoofable, hence the list)', async () => {
    await appTrusting('false');
    expect(await remaining(BALANCER, '198.51.100.1')).toBe(MAX - 1);
    expect(await remaining(BALANCER, '198.51.100.2')).toBe(MAX - 2);
    await app!.close();
    await appTrusting('true');
    expect(await remaining('192.0.2.8', '203.0.113.5, 198.51.100.1')).toBe(MAX - 1);
    expect(await remaining('192.0.2.8', '203.0.113.5')).toBe(MAX - 2);
  });
});
