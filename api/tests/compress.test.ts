import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { AppOptions } from '../src/app-options.ts';
import type { Config } from '../src/config.ts';
import compressPlugin, { COMPRESSION } from '../src/plugins/compress.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp, testConfig } from './support/test-app.ts';

// Compression (api/README.md, "Compression"): large responses are encoded in the coding the
// client prefers, and decode to exactly the bytes an uncompressed request gets, with a
// Content-Length that is the encoded size (HEAD included); small ones, clients that do not ask and
// codings refused with q=0 are served plain.

let f: Fixture;
let app: FastifyInstance;
let off: FastifyInstance;
beforeAll(async () => {
  f = createFixture();
  app = await testApp(f.dataDir, { env: { API_COMPRESS_MIN_BYTES: '200' } });
  off = await testApp(f.dataDir, { env: { API_COMPRESS_MIN_BYTES: '0' } });
});
afterAll(async () => {
  await app.close();
  await off.close();
  f.cleanup();
});

const LIST = '/v1/sites?limit=50&include=contacts';
const get = (server: FastifyInstance, url: string, encoding?: string, method: 'GET' | 'HEAD' = 'GET') =>
  server.inject({
    method,
    url,
    headers: { ...bearer(f.keys.a), ...(encoding === undefined ? {} : { 'accept-encoding': encoding }) },
  });

const DECODE: Record<string, (body: Buffer) => Buffer> = {
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
  zstd: zstdDecompressSync,
};

describe('compression', () => {
  test.each([
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['br', 'br'],
    ['zstd', 'zstd'],
    // What fetch/undici, Python requests, curl --compressed and browsers send.
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate, br, zstd', 'zstd'],
    ['gzip, deflate', 'gzip'],
  ])('Accept-Encoding: %s → %s that decodes to the plain response', async (header, coding) => {
    const plain = await get(app, LIST);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(200);

    const encoded = await get(app, LIST, header);
    expect(encoded.statusCode).toBe(200);
    expect(encoded.headers['content-encoding']).toBe(coding);
    expect(encoded.headers.vary).toMatch(/accept-encoding/i);
    expect(encoded.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(encoded.headers['content-length']).toBe(String(encoded.rawPayload.length));
    expect(encoded.headers['ratelimit-limit']).toBeDefined();
    expect(encoded.rawPayload.length).toBeLessThan(plain.rawPayload.length);
    expect(DECODE[coding]?.(encoded.rawPayload).toString('utf8')).toBe(plain.payload);
  });

  test.each([
    ['gzip;q=0.5, br', 'br'],
    ['gzip;q=0, deflate, br;q=0.9', 'deflate'],
    ['zstd;q=0.9, gzip', 'gzip'],
    ['*;q=0.5, zstd;q=0', 'br'],
    ['br, zstd', 'zstd'],
  ])('q-values: %s → %s', async (header, coding) => {
    const response = await get(app, LIST, header);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(DECODE[coding]?.(response.rawPayload).toString('utf8')).toBe((await get(app, LIST)).payload);
  });

  test.each([
    ['identity'],
    ['gzip;q=0'],
    ['*;q=0'],
    ['identity;q=0'],
    ['compress'],
    ['identity, gzip;q=0.5'],
    [''],
  ])('Accept-Encoding: %j → the plain bytes, 200', async (header) => {
    const plain = await get(app, LIST);
    const response = await get(app, LIST, header);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary).toMatch(/accept-encoding/i);
    expect(response.headers['content-length']).toBe(String(plain.rawPayload.length));
    expect(response.payload).toBe(plain.payload);
  });

  test('without Accept-Encoding: the plain bytes, and Vary says another request may get them encoded', async () => {
    const response = await get(app, LIST);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary).toMatch(/accept-encoding/i);
  });

  test('HEAD: the headers of the encoded GET, the encoded length, no body', async () => {
    const full = await get(app, LIST, 'gzip, deflate, br');
    const head = await get(app, LIST, 'gzip, deflate, br', 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-encoding']).toBe('br');
    expect(head.headers.vary).toMatch(/accept-encoding/i);
    expect(head.headers['content-length']).toBe(String(full.rawPayload.length));
    expect(head.rawPayload.length).toBe(0);
  });

  test('a response under the threshold is not encoded', async () => {
    const response = await get(app, '/v1/health', 'gzip');
    expect(response.rawPayload.length).toBeLessThan(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary ?? '').not.toMatch(/accept-encoding/i);
  });

  test('a problem response is encoded like any JSON when large enough, and still a problem', async () => {
    const plain = await get(app, `/v1/sites?filter[updated_since]=${'x'.repeat(300)}`);
    const response = await get(app, `/v1/sites?filter[updated_since]=${'x'.repeat(300)}`, 'gzip');
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['content-encoding']).toBe('gzip');
    const body = gunzipSync(response.rawPayload).toString('utf8');
    expect(JSON.parse(body).status).toBe(400);
    // The request id differs per request: compare the rest.
    const { request_id: _a, ...decoded } = JSON.parse(body);
    const { request_id: _b, ...expected } = JSON.parse(plain.payload);
    expect(decoded).toEqual(expected);
  });

  test('API_COMPRESS_MIN_BYTES=0 never encodes', async () => {
    const response = await get(off, LIST, 'gzip, br');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(response.headers.vary ?? '').not.toMatch(/accept-encoding/i);
  });
});

// The plugin on its own, for what the api's routes do not produce: a Vary set by the handler,
// bodies that are not JSON, empty bodies, 204/304.
describe('compression plugin', () => {
  let server: FastifyInstance;
  const big = JSON.stringify({ data: 'x'.repeat(5_000) });
  beforeAll(async () => {
    const config: Config = testConfig('/nonexistent', { API_COMPRESS_MIN_BYTES: '100' });
    server = Fastify();
    await server.register(
      fp(
        async (instance) => {
          instance.decorate('config', config);
        },
        { name: 'pda-config' },
      ),
    );
    const options: AppOptions = { config, now: Date.now, compression: COMPRESSION };
    await server.register(compressPlugin, options);
    server.get('/vary', async (_request, reply) => {
      reply.header('vary', 'Authorization, X-Service-Company').type('application/json');
      return big;
    });
    server.get('/text', async (_request, reply) => reply.type('text/plain').send('x'.repeat(5_000)));
    server.get('/empty', async (_request, reply) => reply.type('application/json').send(''));
    server.get('/not-modified', async (_request, reply) => reply.code(304).send());
    server.get('/no-content', async (_request, reply) => reply.code(204).send());
    await server.ready();
  });
  afterAll(async () => {
    await server.close();
  });
  const fetch = (url: string) => server.inject({ url, headers: { 'accept-encoding': 'gzip' } });

  test('Accept-Encoding is added to the Vary the handler set', async () => {
    const response = await fetch('/vary');
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.headers.vary).toBe('Authorization, X-Service-Company, Accept-Encoding');
    expect(gunzipSync(response.rawPayload).toString('utf8')).toBe(big);
  });

  test.each([['/text'], ['/empty'], ['/not-modified'], ['/no-content']])('%s is not encoded', async (url) => {
    const response = await fetch(url);
    expect(response.headers['content-encoding']).toBeUndefined();
  });
});
