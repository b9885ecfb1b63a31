import { describe, expect, it } from 'vitest';
import { type AdminServerOptions, hasBody, startAdminServer } from '../src/index.ts';

// The shared admin port (admin-http/README.md) in the two shapes the deployables use: the api's
// (liveness and metrics only) and ingest's (readiness and a token-guarded operation). Ingest's own
// answers (/rebuild, the company lists) are pinned by ingest/tests/admin-server.test.ts.

const registry = {
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  metrics: async () => 'pda_test_total 1\n',
};

async function withServer(
  options: Omit<AdminServerOptions, 'host' | 'port'>,
  run: (url: (path: string) => string) => Promise<void>,
) {
  const server = await startAdminServer({ host: '127.0.0.1', port: 0, ...options });
  try {
    await run((path) => `http://127.0.0.1:${server.port}${path}`);
  } finally {
    await server.close();
  }
}

const TOKEN = 'secret-token';
const token = { accepts: (authorization: string | undefined) => authorization === `Bearer ${TOKEN}` };

describe('admin server', () => {
  it('liveness and metrics only: /readyz is not there, other methods are 405', async () => {
    await withServer({ registry }, async (url) => {
      const health = await fetch(url('/healthz'));
      expect(health.status).toBe(200);
      expect(health.headers.get('content-type')).toBe('application/json');
      expect(await health.json()).toEqual({ status: 'ok' });
      const metrics = await fetch(url('/metrics?x=1'));
      expect(metrics.headers.get('content-type')).toBe(registry.contentType);
      expect(await metrics.text()).toBe('pda_test_total 1\n');
      const missing = await fetch(url('/readyz'));
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'not found', paths: ['/healthz', '/metrics'] });
      for (const method of ['POST', 'OPTIONS', 'DELETE']) {
        const refused = await fetch(url('/healthz'), { method });
        expect(refused.status).toBe(405);
        expect(await refused.json()).toEqual({ error: 'method not allowed' });
        expect([...refused.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
      }
      expect((await fetch(url('/healthz'), { method: 'HEAD' })).status).toBe(200);
    });
  });

  it('a registry that fails is a 500, the port answers on', async () => {
    const failing = { contentType: 'text/plain', metrics: () => Promise.reject(new Error('no')) };
    await withServer({ registry: failing }, async (url) => {
      const metrics = await fetch(url('/metrics'));
      expect(metrics.status).toBe(500);
      expect(await metrics.json()).toEqual({ error: 'metrics unavailable' });
      expect((await fetch(url('/healthz'))).status).toBe(200);
    });
  });

  it('readiness: 200 or 503, told whether the request carried the token', async () => {
    let ready = false;
    const readiness = (authorized: boolean) => ({ ready, detail: { lag: 5, authorized } });
    await withServer({ registry, readiness, token }, async (url) => {
      const notReady = await fetch(url('/readyz'));
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toEqual({ status: 'not_ready', lag: 5, authorized: false });
      ready = true;
      const withToken = await fetch(url('/readyz'), { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(withToken.status).toBe(200);
      expect(await withToken.json()).toEqual({ status: 'ready', lag: 5, authorized: true });
      expect(await (await fetch(url('/nope'))).json()).toEqual({
        error: 'not found',
        paths: ['/healthz', '/readyz', '/metrics'],
      });
    });
    // Without a token nobody is authorised, whatever is sent.
    await withServer({ registry, readiness }, async (url) => {
      const answer = await fetch(url('/readyz'), { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(await answer.json()).toEqual({ status: 'ready', lag: 5, authorized: false });
    });
  });

  it('operations: 405 for another method, 403 without a configured token, 401 without the token', async () => {
    const calls: string[] = [];
    const operations = {
      noToken: 'set a token',
      unauthorized: 'send the token',
      realm: 'pda-test-admin',
      routes: {
        '/op': {
          methods: ['POST'],
          answer: (_req: unknown, target: URL) => {
            calls.push(target.searchParams.get('x') ?? '');
            return { status: 202, body: { done: true } };
          },
        },
      },
    };
    await withServer({ registry, operations }, async (url) => {
      const refused = await fetch(url('/op'), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({ error: 'set a token' });
    });
    await withServer({ registry, token, operations }, async (url) => {
      expect((await fetch(url('/op'))).status).toBe(405);
      const unauthorized = await fetch(url('/op'), {
        method: 'POST',
        headers: { authorization: 'Bearer x' },
      });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="pda-test-admin"');
      expect(await unauthorized.json()).toEqual({ error: 'send the token' });
      expect(calls).toEqual([]);
      const done = await fetch(url('/op?x=1'), {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(done.status).toBe(202);
      expect(await done.json()).toEqual({ done: true });
      expect(calls).toEqual(['1']);
      expect(await (await fetch(url('/nope'))).json()).toEqual({
        error: 'not found',
        paths: ['/healthz', '/metrics', '/op'],
      });
    });
  });

  it('hasBody: any Content-Type, a transfer encoding or a non-empty length', () => {
    const request = (headers: Record<string, string>) => ({ headers }) as Parameters<typeof hasBody>[0];
    expect(hasBody(request({}))).toBe(false);
    expect(hasBody(request({ 'content-length': '0' }))).toBe(false);
    expect(hasBody(request({ 'content-length': '2' }))).toBe(true);
    expect(hasBody(request({ 'content-type': 'text/plain' }))).toBe(true);
    expect(hasBody(request({ 'transfer-encoding': 'chunked' }))).toBe(true);
  });
});
