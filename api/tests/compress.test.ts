import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp } from './support/test-app.ts';

// Compression (api/README.md, "Compression"): large responses are encoded when the client accepts
// it, and decode to exactly the bytes an uncompressed request gets; small ones and clients that
// do not ask are served as before.

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
const get = (server: FastifyInstance, url: string, encoding?: string) =>
  server.inject({
    url,
    headers: { ...bearer(f.keys.a), ...(encoding ? { 'accept-encoding': encoding } : {}) },
  });

describe('compression', () => {
  test.each([
    ['gzip', gunzipSync],
    ['br', brotliDecompressSync],
  ])('Accept-Encoding: %s → an encoded body that decodes to the plain response', async (encoding, decode) => {
    const plain = await get(app, LIST);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(200);

    const encoded = await get(app, LIST, encoding);
    expect(encoded.statusCode).toBe(200);
    expect(encoded.headers['content-encoding']).toBe(encoding);
    expect(encoded.headers.vary).toMatch(/accept-encoding/i);
    expect(encoded.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(encoded.headers['ratelimit-limit']).toBeDefined();
    expect(encoded.rawPayload.length).toBeLessThan(plain.rawPayload.length);
    expect(decode(encoded.rawPayload).toString('utf8')).toBe(plain.payload);
  });

  test('brotli is preferred when both are accepted', async () => {
    expect((await get(app, LIST, 'gzip, deflate, br')).headers['content-encoding']).toBe('br');
  });

  test('a response under the threshold is not encoded', async () => {
    const response = await get(app, '/v1/health', 'gzip');
    expect(response.rawPayload.length).toBeLessThan(200);
    expect(response.headers['content-encoding']).toBeUndefined();
  });

  test('a problem response is encoded like any JSON when large enough, and still a problem', async () => {
    const response = await get(app, `/v1/sites?filter[updated_since]=${'x'.repeat(300)}`, 'gzip');
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body =
      response.headers['content-encoding'] === 'gzip' ? gunzipSync(response.rawPayload) : response.rawPayload;
    expect(JSON.parse(body.toString('utf8')).status).toBe(400);
  });

  test('API_COMPRESS_MIN_BYTES=0 never encodes', async () => {
    const response = await get(off, LIST, 'gzip, br');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
  });
});
