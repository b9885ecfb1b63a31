import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testConfig } from './support/test-app.ts';

// Production logs at info: one line per request (http/request-log.ts), not Fastify's two.

let f: Fixture;
beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());

test('one line per request with method, URL, status, time and request id', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const app = await buildApp(testConfig(f.dataDir), { loggerInstance: pino({ level: 'info' }, sink) });
  await app.ready();
  lines.length = 0;
  const ok = await app.inject({ url: '/v1/sites?limit=2', headers: bearer(f.keys.a) });
  const refused = await app.inject({ url: '/v1/sites' });
  await app.close();

  const perRequest = lines.filter((line) => line.reqId !== undefined);
  expect(perRequest.map((line) => line.msg)).toEqual(['request completed', 'request completed']);
  expect(perRequest[0]).toMatchObject({
    reqId: ok.headers['x-request-id'],
    req: { method: 'GET', url: '/v1/sites?limit=2' },
    res: { statusCode: 200 },
    responseTime: expect.any(Number),
  });
  expect(perRequest[1]).toMatchObject({ reqId: refused.headers['x-request-id'], res: { statusCode: 401 } });
});
