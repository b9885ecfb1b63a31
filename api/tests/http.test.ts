import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createFixture, type Fixture } from './support/fixture.ts';
import { testApp } from './support/test-app.ts';

// Over a real socket: what inject cannot send (raw bytes, broken request lines, huge headers) and
// the links a real client follows. Every answer is a problem document or a success, never a 500.

let f: Fixture;
let app: FastifyInstance;
let base: string;
let port: number;

beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, { env: { API_RATE_LIMIT_MAX: '100000' } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  await app.close();
  f.cleanup();
});

/**
 * Sends raw bytes, returns status code, headers text and body. The socket stays open for writing
 * (the requests say `Connection: close`): Node's server aborts a request whose client half-closed
 * before it was answered, which an answer read on a reader thread would not beat.
 */
function raw(bytes: Buffer): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = out.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
  });
}

const request = (target: Buffer | string, headers = '') =>
  raw(
    Buffer.concat([
      Buffer.from('GET '),
      typeof target === 'string' ? Buffer.from(target) : target,
      Buffer.from(` HTTP/1.1\r\nHost: test\r\nConnection: close\r\n${headers}\r\n`),
    ]),
  );

describe('over HTTP', () => {
  test('a full walk following absolute links (rewritten to this server)', async () => {
    const seen: string[] = [];
    let url: string | null = `${base}/v1/sites?limit=1`;
    while (url) {
      const response: Response = await fetch(url, { headers: { authorization: `Bearer ${f.keys.a}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-remaining')).not.toBeNull();
      const body = (await response.json()) as { data: { id: string }[]; links: { next: string | null } };
      seen.push(...body.data.map((row) => row.id));
      url = body.links.next?.replace('https://api.test.example', base) ?? null;
    }
    expect(seen).toEqual(f.ids.A.sites);
  });

  test('raw non-UTF-8 bytes in the request target → 400 problem document', async () => {
    const response = await request(
      Buffer.concat([Buffer.from('/v1/sites?sort='), Buffer.from([0xff, 0xfe])]),
    );
    expect(response.status).toBe(400);
    expect(response.head).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(response.body).code).toBe('bad_request');
  });

  test('percent-encoded invalid UTF-8 → 400 invalid_parameter naming the parameter', async () => {
    const response = await request(
      '/v1/sites?fields%5Bsites%5D=%C0%AF',
      `Authorization: Bearer ${f.keys.a}\r\n`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).errors[0].parameter).toBe('fields[sites]');
  });

  test('unencoded brackets in parameter names work', async () => {
    const response = await request('/v1/sites?fields[sites]=name', `Authorization: Bearer ${f.keys.a}\r\n`);
    expect(response.status).toBe(200);
    expect(Object.keys(JSON.parse(response.body).data[0])).toEqual(['id', 'name']);
  });

  test('a non-Latin-1 Authorization header → 401 unauthenticated', async () => {
    const response = await raw(
      Buffer.concat([
        Buffer.from('GET /v1/me HTTP/1.1\r\nHost: test\r\nConnection: close\r\nAuthorization: Bearer '),
        Buffer.from([0xc3, 0xff, 0x00].slice(0, 2)),
        Buffer.from('\r\n\r\n'),
      ]),
    );
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body).code).toBe('unauthenticated');
  });

  test('a broken request line → 400 problem document', async () => {
    const response = await raw(Buffer.from('GARBAGE\r\n\r\n'));
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).code).toBe('bad_request');
  });

  test('oversized headers → 400 problem document', async () => {
    const response = await request('/v1/health', `X-Big: ${'a'.repeat(20_000)}\r\n`);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).code).toBe('bad_request');
  });

  test('a very long query string is refused with a problem document, not a 500', async () => {
    const response = await request(
      `/v1/sites?sort=${'name,'.repeat(2_500)}id`,
      `Authorization: Bearer ${f.keys.a}\r\n`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).code).toMatch(/^(invalid_parameter|bad_request)$/);
  });
});
