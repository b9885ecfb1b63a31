import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testConfig } from './support/test-app.ts';

// Production logs at info: one line per request (logging/request-log.ts), not Fastify's two.

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

// A key sent the wrong way (query string, path) is refused with 401 and must not reach the logs
// either (logging/log-redaction.ts): whatever the answer, whichever way the logger is configured.
const KEY = 'svc_pk_0123456789abcdef0123456789abcdef';

function captureLines(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, sink };
}

test.each([
  ['a pino instance', (sink: Writable) => ({ loggerInstance: pino({ level: 'trace' }, sink) })],
  ['pino options (as main.ts does)', (sink: Writable) => ({ logger: { level: 'trace', stream: sink } })],
])('a key in the URL never reaches a log line (%s)', async (_name, logger) => {
  const { lines, sink } = captureLines();
  const app = await buildApp(testConfig(f.dataDir), logger(sink));
  await app.ready();
  const answers = [
    await app.inject({ url: `/v1/sites?api_key=${KEY}` }),
    await app.inject({ url: `/v1/sites?limit=2&Access_Token=${encodeURIComponent(KEY)}` }),
    await app.inject({ url: `/v1/sites?x=svc%5Fpk%5F${KEY.slice(7)}`, headers: bearer(f.keys.a) }),
    await app.inject({ url: `/v1/sites/${KEY}`, headers: bearer(f.keys.a) }),
    await app.inject({ url: `/v1/${KEY}` }),
    await app.inject({ method: 'DELETE', url: `/v1/sites?token=${KEY}` }),
    await app.inject({ url: `/v1/sites/%E0%A4%A?key=${KEY}` }),
  ];
  await app.close();
  expect(answers.map((answer) => answer.statusCode)).toEqual([401, 401, 400, 404, 404, 405, 400]);
  const logged = lines.join('');
  expect(logged).toContain('request completed');
  expect(logged).not.toMatch(/svc_pk_|svc%5Fpk/i);
  expect(logged).not.toContain(KEY.slice(7));
  const parsed = lines.map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
  const completed = parsed.filter((line) => line.msg === 'request completed');
  // A URL Fastify cannot route is logged by the framework-error handler instead (app.ts).
  expect(completed).toHaveLength(answers.length - 1);
  expect(parsed.find((line) => line.msg === 'malformed request URL')?.req?.url).toBe(
    '/v1/sites/%E0%A4%A?key=[REDACTED]',
  );
  expect(completed[0]?.req?.url).toBe('/v1/sites?api_key=[REDACTED]');
  // The rest of the URL stays readable.
  expect(completed[1]?.req?.url).toBe('/v1/sites?limit=2&Access_Token=[REDACTED]');
});

// Cursors and sync tokens are signed, not encrypted (a cursor's JSON holds the boundary row's sort
// values, a site's name): a logged URL carries a digest of each instead (http/opaque-values.ts).
test('cursors and sync tokens in a logged URL are digests', async () => {
  const { lines, sink } = captureLines();
  const app = await buildApp(testConfig(f.dataDir), { loggerInstance: pino({ level: 'info' }, sink) });
  await app.ready();
  const first = await app.inject({ url: '/v1/sites?limit=1&sort=name', headers: bearer(f.keys.a) });
  const next = new URL(first.json().links.next);
  await app.inject({ url: `${next.pathname}${next.search}`, headers: bearer(f.keys.a) });
  const last = await app.inject({ url: '/v1/sites?limit=200', headers: bearer(f.keys.a) });
  const sync = new URL(last.json().links.sync);
  await app.inject({ url: `${sync.pathname}${sync.search}`, headers: bearer(f.keys.a) });
  await app.close();

  const cursor = next.searchParams.get('cursor')!;
  const token = sync.searchParams.get('sync')!;
  const logged = lines.join('');
  expect(logged).not.toContain(cursor.split('.')[0]);
  expect(logged).not.toContain(token.split('.')[0]);
  const urls = lines.map((line) => JSON.parse(line).req?.url).filter(Boolean);
  expect(urls).toContainEqual(expect.stringMatching(/[?&]cursor=#[0-9a-f]{12}(&|$)/));
  expect(urls).toContainEqual(expect.stringMatching(/[?&]sync=#[0-9a-f]{12}(&|$)/));
});

// The parser decodes parameter names (http/query-string.ts): `%63ursor=` is read as the cursor and
// answered, so the log must judge the name decoded as well, not as sent.
test('a cursor or sync token under a percent-encoded name is logged as a digest too', async () => {
  const { lines, sink } = captureLines();
  const app = await buildApp(testConfig(f.dataDir), { loggerInstance: pino({ level: 'info' }, sink) });
  await app.ready();
  const first = await app.inject({ url: '/v1/sites?limit=1&sort=name', headers: bearer(f.keys.a) });
  const cursor = new URL(first.json().links.next).searchParams.get('cursor')!;
  const next = await app.inject({
    url: `/v1/sites?limit=1&sort=name&%63ursor=${cursor}`,
    headers: bearer(f.keys.a),
  });
  const last = await app.inject({ url: '/v1/sites?limit=200', headers: bearer(f.keys.a) });
  const token = new URL(last.json().links.sync).searchParams.get('sync')!;
  const sync = await app.inject({ url: `/v1/sites?limit=200&%73ync=${token}`, headers: bearer(f.keys.a) });
  await app.close();

  expect([next.statusCode, sync.statusCode]).toEqual([200, 200]);
  const logged = lines.join('');
  expect(logged).not.toContain(cursor.split('.')[0]);
  expect(logged).not.toContain(token.split('.')[0]);
  const urls = lines.map((line) => JSON.parse(line).req?.url).filter(Boolean);
  expect(urls).toContainEqual(expect.stringMatching(/[?&]%63ursor=#[0-9a-f]{12}(&|$)/));
  expect(urls).toContainEqual(expect.stringMatching(/[?&]%73ync=#[0-9a-f]{12}(&|$)/));
});

// The cheapest answers a client can ask for fastest (a preflight's 204, a poll's 304) must not
// each cost an info line (logging/request-log.ts): at debug, counted in the metrics.
test.each(['info', 'debug'])('204 and 304 answers log at debug (logger at %s)', async (level) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  const app = await buildApp(testConfig(f.dataDir), { loggerInstance: pino({ level }, sink) });
  await app.ready();
  const url = '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z';
  const page = await app.inject({ url, headers: bearer(f.keys.a) });
  const poll = await app.inject({
    url,
    headers: { ...bearer(f.keys.a), 'if-none-match': String(page.headers.etag) },
  });
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/sites',
    headers: { origin: 'https://partner.example', 'access-control-request-method': 'GET' },
  });
  await app.close();

  expect([page.statusCode, poll.statusCode, preflight.statusCode]).toEqual([200, 304, 204]);
  const completed = (response: { headers: Record<string, unknown> }) =>
    lines.filter(
      (line) => line.reqId === response.headers['x-request-id'] && line.msg === 'request completed',
    );
  expect(completed(page).map((line) => line.level)).toEqual([30]);
  const quiet = level === 'debug' ? [20] : [];
  expect(completed(poll).map((line) => line.level)).toEqual(quiet);
  expect(completed(preflight).map((line) => line.level)).toEqual(quiet);
  // Nothing else at info for them either.
  const other = (response: { headers: Record<string, unknown> }) =>
    lines.filter((line) => line.reqId === response.headers['x-request-id'] && Number(line.level) >= 30);
  expect([...other(poll), ...other(preflight)]).toEqual([]);
});
