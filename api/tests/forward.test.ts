import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync, zstdDecompressSync } from 'node:zlib';
import { companyPartition, companyPath } from '@pda/projections/model';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../src/app.ts';
import { ConfigError } from '../src/config.ts';
import { HOP_SECRET_HEADER } from '../src/forward/hop.ts';
import { COMPANY, createFixture, type Fixture } from './support/fixture.ts';
import { GATE_HEADER, requestGate } from './support/request-gate.ts';
import { testConfig } from './support/test-app.ts';

// Writers split by company (api/README.md, "Writers split by company"): two real api instances on
// loopback, each with every key, grant and company row but only its own company file (x holds A,
// y holds B). A request for B reached through x must answer exactly what y answers directly.

const SECRET = 'forward-secret-0123456789abcdef-0123456789';
const FORWARD_TIMEOUT_MS = 800;

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

function call(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Headers that differ between two requests whatever the path: per request, per connection, per budget. */
const PER_REQUEST = new Set([
  'date',
  'x-request-id',
  'connection',
  'keep-alive',
  'ratelimit-remaining',
  'ratelimit-reset',
]);

const DECODERS: Record<string, (bytes: Buffer) => Buffer> = {
  identity: (bytes) => bytes,
  gzip: (bytes) => gunzipSync(bytes),
  deflate: (bytes) => inflateSync(bytes),
  br: (bytes) => brotliDecompressSync(bytes),
  zstd: (bytes) => zstdDecompressSync(bytes),
};

function comparable(answer: Answer): { status: number; headers: Record<string, unknown>; body: string } {
  const headers: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (!PER_REQUEST.has(name)) headers[name] = value;
  let body = answer.body.toString('latin1');
  const type = String(answer.headers['content-type'] ?? '');
  if (type.startsWith('application/problem+json')) {
    const decode = DECODERS[String(answer.headers['content-encoding'] ?? 'identity')];
    if (decode === undefined) throw new Error(`unexpected coding ${answer.headers['content-encoding']}`);
    const doc = JSON.parse(decode(answer.body).toString('utf8')) as Record<string, unknown>;
    // The request id is the forwarding node's on a hop and the owner's when asked directly.
    expect(doc.request_id).toBe(answer.headers['x-request-id']);
    doc.request_id = '(request id)';
    body = JSON.stringify(doc);
    // A compressed document's length follows its request id's bytes.
    if (answer.headers['content-encoding'] !== undefined) delete headers['content-length'];
  }
  return { status: answer.status, headers, body };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function bearer(key: string, more: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${key}`, ...more };
}

async function forwarded(app: FastifyInstance): Promise<Record<string, number>> {
  const metric = await app.metrics.registry.getSingleMetric('pda_api_forwarded_total')?.get();
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) out[String(v.labels.outcome)] = v.value;
  return out;
}

async function heldOn(app: FastifyInstance): Promise<number> {
  const text = await app.metrics.registry.getSingleMetricAsString('pda_api_held_requests');
  return Number(/^pda_api_held_requests (\d+)$/m.exec(text)?.[1]);
}

/** Polls `condition`, at most ~5 s (a bound for a busy machine, not a speed asserted). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${what}`);
}

let f: Fixture;
let work: string;
let partitions: number;
let ports: { x: number; y: number };
const files = { x: '', y: '', secret: '' };
const apps: Partial<Record<'x' | 'y', FastifyInstance>> = {};
const dirs = { x: '', y: '' };

function ownershipText(servesB: 'x' | 'y'): string {
  const a = companyPartition(COMPANY.A, partitions);
  const all = Array.from({ length: partitions }, (_, p) => p);
  const b = companyPartition(COMPANY.B, partitions);
  const x = all.filter((p) => p === a || (servesB === 'x' && p === b));
  const y = all.filter((p) => !x.includes(p));
  return JSON.stringify({
    partitions,
    writers: [
      { name: 'x', api: `http://127.0.0.1:${ports.x}`, serves: x },
      { name: 'y', api: `http://127.0.0.1:${ports.y}/`, serves: y },
    ],
  });
}

function nodeEnv(name: 'x' | 'y', extra: Record<string, string> = {}): Record<string, string> {
  return {
    API_OWNERSHIP_FILE: files[name],
    API_WRITER_NAME: name,
    API_FORWARD_SECRET_FILE: files.secret,
    API_FORWARD_TIMEOUT_MS: String(FORWARD_TIMEOUT_MS),
    API_FORWARD_RETRY_AFTER_S: '7',
    API_COMPRESS_MIN_BYTES: '64',
    API_RATE_LIMIT_MAX: '1000',
    ...extra,
  };
}

/** Every log line of both nodes: none may hold a key or the secret. */
const logged: string[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    logged.push(String(chunk));
    done();
  },
});

/** Holds requests that send GATE_HEADER in progress on both nodes (fair shares). */
const gate = requestGate();

async function start(name: 'x' | 'y'): Promise<FastifyInstance> {
  const app = await buildApp(testConfig(dirs[name], nodeEnv(name)), {
    loggerInstance: pino({ level: 'info' }, sink).child({ node: name }),
    plugins: [gate.plugin],
  });
  await app.listen({ host: '127.0.0.1', port: ports[name] });
  apps[name] = app;
  return app;
}

beforeAll(async () => {
  f = createFixture();
  work = mkdtempSync(join(tmpdir(), 'pda-api-forward-'));
  partitions = 2;
  while (companyPartition(COMPANY.A, partitions) === companyPartition(COMPANY.B, partitions)) partitions += 1;
  ports = { x: await freePort(), y: await freePort() };
  for (const name of ['x', 'y'] as const) {
    dirs[name] = join(work, name);
    cpSync(f.dataDir, dirs[name], { recursive: true });
    files[name] = join(work, `ownership-${name}.json`);
    writeFileSync(files[name], ownershipText('y'));
  }
  // Each node holds only its own company's file; control.sqlite (keys, grants, companies) is whole.
  for (const suffix of ['', '-wal', '-shm']) {
    rmSync(companyPath(dirs.x, COMPANY.B) + suffix, { force: true });
    rmSync(companyPath(dirs.y, COMPANY.A) + suffix, { force: true });
  }
  files.secret = join(work, 'forward-secret');
  writeFileSync(files.secret, `${SECRET}\n`);
  await start('x');
  await start('y');
});

afterAll(async () => {
  for (const app of Object.values(apps)) await app?.close();
  const all = logged.join('');
  expect(all).not.toContain(SECRET.slice(0, 20));
  for (const key of Object.values(f.keys)) expect(all).not.toContain(key);
  f?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('a request for the other node’s company', () => {
  const paths = () => [
    '/v1/sites',
    '/v1/sites?limit=1&sort=-name',
    `/v1/sites/${f.ids.B.sites[0]}?include=contacts`,
    '/v1/equipment?include=category&fields[equipment]=name',
    '/v1/deletions',
    '/v1/changes?limit=2',
    // Answers the owner refuses pass through unchanged.
    '/v1/sites?limit=abc',
    `/v1/sites/${f.ids.A.sites[0]}`,
    '/v1/sites?cursor=not-a-cursor',
    '/v1/sites?sort=name,name',
  ];

  test.each([
    ['identity', {}],
    ['gzip', { 'accept-encoding': 'gzip' }],
    ['br', { 'accept-encoding': 'gzip, deflate, br' }],
    ['zstd', { 'accept-encoding': 'zstd' }],
  ])('through either node answers what the owner answers (%s)', async (_name, encoding) => {
    for (const path of paths()) {
      const headers = bearer(f.keys.b, encoding);
      const direct = await call(ports.y, path, headers);
      const hop = await call(ports.x, path, headers);
      expect(comparable(hop), path).toEqual(comparable(direct));
      expect(hop.headers['ratelimit-limit']).toBe('1000');
    }
  });

  test('a multi-company key selects with X-Service-Company, both directions', async () => {
    for (const [company, owner, other] of [
      [COMPANY.B, ports.y, ports.x],
      [COMPANY.A, ports.x, ports.y],
    ] as const) {
      const headers = bearer(f.keys.multi, { 'x-service-company': company, 'accept-encoding': 'gzip' });
      const direct = await call(owner, '/v1/services?limit=1', headers);
      const hop = await call(other, '/v1/services?limit=1', headers);
      expect(direct.status).toBe(200);
      expect(comparable(hop)).toEqual(comparable(direct));
    }
  });

  test('a cursor page, and links that walk on through the other node', async () => {
    const first = JSON.parse((await call(ports.x, '/v1/sites?limit=1', bearer(f.keys.b))).body.toString());
    const next = new URL(first.links.next as string);
    const path = `${next.pathname}${next.search}`;
    const direct = await call(ports.y, path, bearer(f.keys.b));
    const hop = await call(ports.x, path, bearer(f.keys.b));
    expect(direct.status).toBe(200);
    expect(comparable(hop)).toEqual(comparable(direct));
    expect(JSON.parse(hop.body.toString()).data[0].id).toBe(f.ids.B.sites[1]);
  });

  test('304 with If-None-Match, the budget given back where it was spent', async () => {
    const path = '/v1/sites?filter[updated_since]=2000-01-01T00:00:00Z';
    const first = await call(ports.x, path, bearer(f.keys.b));
    expect(first.status).toBe(200);
    const etag = String(first.headers.etag);
    const direct = await call(ports.y, path, bearer(f.keys.b, { 'if-none-match': etag }));
    const before = await call(ports.x, '/v1/me', bearer(f.keys.b));
    const hop = await call(ports.x, path, bearer(f.keys.b, { 'if-none-match': etag }));
    const after = await call(ports.x, '/v1/me', bearer(f.keys.b));
    expect(direct.status).toBe(304);
    expect(comparable(hop)).toEqual(comparable(direct));
    // /v1/me costs one; the 304 between them nothing.
    expect(Number(after.headers['ratelimit-remaining'])).toBe(
      Number(before.headers['ratelimit-remaining']) - 1,
    );
    expect(Number(hop.headers['ratelimit-remaining'])).toBe(Number(after.headers['ratelimit-remaining']) + 1);
  });

  test('the budget is counted once, on the node the partner reached', async () => {
    const remaining = async (port: number) =>
      Number((await call(port, '/v1/me', bearer(f.keys.b))).headers['ratelimit-remaining']);
    const y0 = await remaining(ports.y);
    const x0 = await remaining(ports.x);
    for (let i = 0; i < 3; i++) expect((await call(ports.x, '/v1/sites', bearer(f.keys.b))).status).toBe(200);
    const hop = await call(ports.x, '/v1/sites', bearer(f.keys.b));
    expect(Number(hop.headers['ratelimit-remaining'])).toBe(x0 - 4);
    expect(await remaining(ports.y)).toBe(y0 - 1); // only the /v1/me call itself
  });

  test('one request id: the forwarding node’s, on both nodes', async () => {
    const hop = await call(ports.x, '/v1/sites?limit=abc', bearer(f.keys.b));
    expect(hop.status).toBe(400);
    expect(JSON.parse(hop.body.toString()).request_id).toBe(hop.headers['x-request-id']);
  });

  test('HEAD passes through', async () => {
    const headers = bearer(f.keys.b, { 'accept-encoding': 'br' });
    const direct = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: ports.y, path: '/v1/sites', method: 'HEAD', headers, agent: false },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    const hop = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: ports.x, path: '/v1/sites', method: 'HEAD', headers, agent: false },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.alloc(0) }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(comparable(hop)).toEqual(comparable(direct));
  });

  test('a held change-feed request waits longer than the hop timeout', async () => {
    const start = Date.now();
    const hop = await call(ports.x, '/v1/changes?limit=200&wait=2', bearer(f.keys.b));
    const first = JSON.parse(hop.body.toString());
    expect(hop.status).toBe(200);
    const next = new URL(first.links.next as string);
    const held = Date.now();
    const waited = await call(ports.x, `${next.pathname}${next.search}`, bearer(f.keys.b));
    expect(waited.status).toBe(200);
    expect(JSON.parse(waited.body.toString()).data).toEqual([]);
    expect(Date.now() - held).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - start).toBeGreaterThan(FORWARD_TIMEOUT_MS);
  });

  test('a partner that goes away aborts the hop: the owner frees the held slot at once', async () => {
    const first = await call(ports.x, '/v1/changes?limit=200', bearer(f.keys.b));
    const next = new URL(JSON.parse(first.body.toString()).links.next as string);
    const gone = (await forwarded(apps.x!)).partner_gone ?? 0;
    const warnings = () => logged.filter((line) => line.includes('response errored')).length;
    const warned = warnings();
    const request = httpRequest({
      host: '127.0.0.1',
      port: ports.x,
      path: `${next.pathname}${next.search}&wait=30`,
      headers: bearer(f.keys.b),
      agent: false,
    });
    request.on('error', () => undefined);
    request.end();
    await until(async () => (await heldOn(apps.y!)) === 1, 'held on the owner');
    // The forwarding node counts it in the key's held share, not in progress; the owner holds it.
    expect(apps.x!.fairShares.counts(f.keyIds.b)).toEqual({ inProgress: 0, held: 1, streams: 0 });
    expect(apps.y!.fairShares.counts(f.keyIds.b)).toEqual({ inProgress: 0, held: 1, streams: 0 });
    request.destroy();
    // Well before its wait (30 s) would have answered it.
    await until(async () => (await heldOn(apps.y!)) === 0, 'the owner’s slot freed');
    expect(apps.y!.fairShares.counts(f.keyIds.b).held).toBe(0);
    await until(() => apps.x!.fairShares.counts(f.keyIds.b).held === 0, 'the partner’s share freed');
    expect((await forwarded(apps.x!)).partner_gone).toBe(gone + 1);
    // Not a failure of the hop: no warning.
    expect(warnings()).toBe(warned);
  });

  test('a request in progress is counted where it arrived, not again on the owner', async () => {
    const answer = call(ports.x, '/v1/sites', bearer(f.keys.b, { [GATE_HEADER]: '1' }));
    try {
      // x forwards it before any handler runs: the gate holds it on y, the owner, while x waits.
      await until(() => gate.waiting() === 1, 'the request in progress on the owner');
      expect(apps.x!.fairShares.counts(f.keyIds.b).inProgress).toBe(1);
      expect(apps.y!.fairShares.counts(f.keyIds.b).inProgress).toBe(0);
      gate.open();
      expect((await answer).status).toBe(200);
      expect(apps.x!.fairShares.counts(f.keyIds.b).inProgress).toBe(0);
    } finally {
      gate.open();
      gate.close();
      await answer;
    }
  });

  test('requests that are not company-scoped are answered where they arrive', async () => {
    const before = await forwarded(apps.x!);
    const me = await call(ports.x, '/v1/me', bearer(f.keys.b));
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body.toString()).data.company.id).toBe(COMPANY.B);
    expect((await call(ports.x, '/v1/health')).headers['x-request-id']).toBeDefined();
    expect((await call(ports.x, '/v1/reference/scopes', bearer(f.keys.b))).status).toBe(200);
    expect(await forwarded(apps.x!)).toEqual(before);
  });

  test('both nodes log the request under one id; the owner names the hop and the partner address', async () => {
    const hop = await call(ports.x, '/v1/services', bearer(f.keys.b));
    const id = String(hop.headers['x-request-id']);
    const lines = logged
      .filter((line) => line.includes(id))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const x = lines.find((line) => line.node === 'x' && line.msg === 'request completed');
    const y = lines.find((line) => line.node === 'y' && line.msg === 'request completed');
    expect(x?.forwarded_to).toBe('y');
    expect(y).toMatchObject({ hop_from: 'x', hop_client: '127.0.0.1' });
  });

  test('metrics count what the owner served', async () => {
    const before = (await forwarded(apps.x!)).served_by_owner ?? 0;
    const servedBefore = (await forwarded(apps.y!)).hop_served ?? 0;
    await call(ports.x, '/v1/consumables', bearer(f.keys.b));
    expect((await forwarded(apps.x!)).served_by_owner).toBe(before + 1);
    expect((await forwarded(apps.y!)).hop_served).toBe(servedBefore + 1);
  });
});

describe('hops the owner refuses', () => {
  test('a wrong secret: 401 problem, logged and counted, never served', async () => {
    const before = (await forwarded(apps.y!)).hop_refused ?? 0;
    for (const wrong of ['wrong', `${SECRET}x`, '']) {
      const answer = await call(ports.y, '/v1/sites', bearer(f.keys.b, { [HOP_SECRET_HEADER]: wrong }));
      expect(answer.status).toBe(401);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.headers['ratelimit-limit']).toBe('1000');
      expect(JSON.parse(answer.body.toString()).code).toBe('unauthenticated');
    }
    expect((await forwarded(apps.y!)).hop_refused).toBe(before + 3);
    const refusals = logged.filter((line) => line.includes('forwarding header with a wrong secret refused'));
    expect(refusals.length).toBeGreaterThanOrEqual(3);
  });

  test('a trusted hop for a company this node does not serve: 503, never forwarded again', async () => {
    const answer = await call(ports.y, '/v1/sites', bearer(f.keys.a, { [HOP_SECRET_HEADER]: SECRET }));
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('7');
    expect(JSON.parse(answer.body.toString()).code).toBe('service_unavailable');
  });

  test('stale ownership on the owner: the loop stops at one hop with a 503', async () => {
    writeFileSync(files.y, ownershipText('x')); // y now believes x serves B; x still believes y does
    try {
      const before = (await forwarded(apps.y!)).hop_not_owner ?? 0;
      const answer = await call(ports.x, '/v1/sites', bearer(f.keys.b));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('7');
      expect(JSON.parse(answer.body.toString()).code).toBe('service_unavailable');
      expect((await forwarded(apps.y!)).hop_not_owner).toBe(before + 1);
    } finally {
      writeFileSync(files.y, ownershipText('y'));
    }
    expect((await call(ports.x, '/v1/sites', bearer(f.keys.b))).status).toBe(200);
  });

  test('an ownership file that stops parsing leaves the previous one in force', async () => {
    writeFileSync(files.x, '{ not json');
    try {
      expect((await call(ports.x, '/v1/sites', bearer(f.keys.b))).status).toBe(200);
    } finally {
      writeFileSync(files.x, ownershipText('y'));
    }
  });
});

describe('a dead owner', () => {
  test('stopped: 503 with Retry-After and a problem document, then served again once back', async () => {
    await apps.y!.close();
    delete apps.y;
    const before = (await forwarded(apps.x!)).owner_unreachable ?? 0;
    const answer = await call(ports.x, '/v1/sites', bearer(f.keys.b, { 'accept-encoding': 'gzip' }));
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('7');
    expect(answer.headers['ratelimit-limit']).toBe('1000');
    expect(answer.headers['cache-control']).toBe('private, no-store');
    expect(answer.headers['content-encoding']).toBe('gzip');
    const doc = JSON.parse(gunzipSync(answer.body).toString());
    expect(doc.code).toBe('service_unavailable');
    expect(doc.request_id).toBe(answer.headers['x-request-id']);
    expect((await forwarded(apps.x!)).owner_unreachable).toBe(before + 1);
    const failure = logged.filter((line) => line.includes(String(answer.headers['x-request-id'])));
    // One warning (the failure, naming the owner) and the request's completion line.
    expect(failure.filter((line) => JSON.parse(line).level === 40)).toHaveLength(1);
    expect(JSON.parse(failure.find((line) => JSON.parse(line).level === 40)!).forwarded_to).toBe('y');
    // Company A is x's own: unaffected.
    expect((await call(ports.x, '/v1/sites', bearer(f.keys.a))).status).toBe(200);
  });

  test('a connection closed before the answer is tried once more; twice is a 503', async () => {
    let connections = 0;
    let closeFirst = 1;
    const flaky: Server = createServer((socket) => {
      connections += 1;
      const n = connections;
      socket.once('data', () => {
        if (n <= closeFirst) socket.destroy();
        else
          socket.end(
            'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}',
          );
      });
    });
    await new Promise<void>((resolve) => flaky.listen(ports.y, '127.0.0.1', resolve));
    try {
      const answer = await call(ports.x, '/v1/sites', bearer(f.keys.b));
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe('{}');
      expect(connections).toBe(2);
      connections = 0;
      closeFirst = 2;
      const refused = await call(ports.x, '/v1/sites', bearer(f.keys.b));
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('7');
      expect(connections).toBe(2);
    } finally {
      await new Promise<void>((resolve) => flaky.close(() => resolve()));
    }
  });

  test('accepting but never answering: 503 after the hop timeout', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => {
      sockets.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(ports.y, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const answer = await call(ports.x, '/v1/sites', bearer(f.keys.b));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('7');
      // undici checks its timeouts on a coarse timer: early or late by a fraction of a second.
      expect(Date.now() - started).toBeGreaterThanOrEqual(FORWARD_TIMEOUT_MS / 2);
      expect(Date.now() - started).toBeLessThan(FORWARD_TIMEOUT_MS + 3_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    await start('y');
    expect((await call(ports.x, '/v1/sites', bearer(f.keys.b))).status).toBe(200);
  });
});

describe('settings', () => {
  test('without them: no forwarding, hop headers ignored', async () => {
    const app = await buildApp(testConfig(dirs.x), { logger: false });
    try {
      const answer = await app.inject({
        url: '/v1/sites',
        headers: bearer(f.keys.b, { [HOP_SECRET_HEADER]: 'anything' }),
      });
      // B's file is not on this node: the usual 503 of a missing company file, no hop.
      expect(answer.statusCode).toBe(503);
      expect(
        (await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a, { [HOP_SECRET_HEADER]: SECRET }) }))
          .statusCode,
      ).toBe(200);
      expect(await forwarded(app)).toEqual({});
    } finally {
      await app.close();
    }
  });

  test('refused at start: partial, bad file, unknown writer, short or missing secret', () => {
    const bad = join(work, 'bad-ownership.json');
    writeFileSync(
      bad,
      JSON.stringify({ partitions: 2, writers: [{ name: 'x', api: 'http://h', serves: [0] }] }),
    );
    const short = join(work, 'short-secret');
    writeFileSync(short, 'too-short\n');
    const cases: [Record<string, string>, RegExp][] = [
      [{ API_OWNERSHIP_FILE: files.x }, /go together/],
      [{ API_OWNERSHIP_FILE: files.x, API_WRITER_NAME: 'x' }, /go together/],
      [{ ...nodeEnv('x'), API_OWNERSHIP_FILE: bad }, /no writer serves partition/],
      [{ ...nodeEnv('x'), API_OWNERSHIP_FILE: join(work, 'missing.json') }, /ENOENT/],
      [{ ...nodeEnv('x'), API_WRITER_NAME: 'z' }, /writer "z" is not in the ownership file/],
      [{ ...nodeEnv('x'), API_FORWARD_SECRET_FILE: short }, /at least 32 bytes/],
      [{ ...nodeEnv('x'), API_FORWARD_SECRET_FILE: join(work, 'nope') }, /ENOENT/],
      [{ ...nodeEnv('x'), API_FORWARD_TIMEOUT_MS: '5' }, /API_FORWARD_TIMEOUT_MS/],
    ];
    for (const [env, message] of cases) {
      expect(() => testConfig(dirs.x, env)).toThrow(ConfigError);
      expect(() => testConfig(dirs.x, env)).toThrow(message);
    }
    const config = testConfig(dirs.x, nodeEnv('x'));
    expect(config.forwarding?.writerName).toBe('x');
    expect(config.forwarding?.secret).toBe(SECRET);
    expect(testConfig(dirs.x).forwarding).toBeUndefined();
  });
});
