import { type AddressInfo, connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createFixture, type Fixture } from './support/fixture.ts';
import { testApp } from './support/test-app.ts';

/**
 * Answers given before Fastify has a request (Node's HTTP parser refused the request line or the
 * headers, connections/client-error.ts) spend the client address's budget and carry RateLimit-* headers
 * like every answer; once the budget is spent they are 429 rate_limit_exceeded with Retry-After.
 * Found by Schemathesis (ST107: oversized query strings answered without the required headers).
 */

const MAX = 3;
let f: Fixture;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, {
    env: { API_RATE_LIMIT_MAX: String(MAX), API_RATE_LIMIT_WINDOW_MS: '60000' },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

function raw(
  bytes: Buffer,
): Promise<{ status: number; headers: Map<string, string>; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(bytes));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, head, body });
    });
  });
}

const oversized = () =>
  raw(
    Buffer.from(`GET /v1/health?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`),
  );
const brokenLine = () => raw(Buffer.from('GARBAGE\r\n\r\n'));

test('parser-refused requests spend the address budget, carry the headers, then get 429', async () => {
  const first = await oversized();
  expect(first.status).toBe(400);
  expect(JSON.parse(first.body).code).toBe('bad_request');
  expect(first.headers.get('ratelimit-limit')).toBe(String(MAX));
  expect(first.headers.get('ratelimit-remaining')).toBe(String(MAX - 1));
  expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThan(0);

  const second = await brokenLine();
  expect(second.status).toBe(400);
  expect(second.headers.get('ratelimit-remaining')).toBe(String(MAX - 2));

  // The same budget as a request Fastify does parse from this address.
  const health = await fetch(`http://127.0.0.1:${port}/v1/health`);
  expect(health.headers.get('ratelimit-remaining')).toBe('0');

  const refused = await oversized();
  expect(refused.status).toBe(429);
  expect(JSON.parse(refused.body).code).toBe('rate_limit_exceeded');
  // Counted like a route's 429, though no request (and no onResponse hook) exists (api/README.md, "Metrics").
  expect(await app.metrics.registry.getSingleMetricAsString('pda_api_rate_limited_total')).toContain(
    'pda_api_rate_limited_total{reason="rate_limit_exceeded"} 1',
  );
  expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(refused.head.match(/^retry-after:/gim)).toHaveLength(1);
  expect(refused.head.split('\r\n')[0]).toBe('HTTP/1.1 429 Too Many Requests');
  // The same document as a 429 answered by a route (api-error.ts, rateLimitExceeded).
  expect(JSON.parse(refused.body).detail).toMatch(/spent; retry in \d+ s\.$/);
  expect(refused.headers.get('ratelimit-remaining')).toBe('0');
});
