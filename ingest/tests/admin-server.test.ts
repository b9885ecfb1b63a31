import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type AdminServer,
  NO_ADMIN_TOKEN,
  type Readiness,
  startAdminServer,
} from '../src/admin-port/admin-server.ts';
import { readAdminToken } from '../src/admin-token.ts';
import { createMetrics } from '../src/observability/metrics.ts';

// The admin port both ways (ingest/README.md, "Operations: admin port"): health, readiness and
// metrics open to anyone; rebuilds and the company lists only with the token, never as a request a
// browser could send without asking first.
const dir = mkdtempSync(join(tmpdir(), 'pda-admin-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'c0ffee'.repeat(8);
const tokenFile = join(dir, 'admin-token');
writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
const company = 'aaaaaaaa-0000-4000-8000-00000000000a';

/** A port like the worker's: readiness names a company only when asked with the token. */
async function adminPort(token: boolean) {
  const asked: string[] = [];
  const rebuilds: unknown[] = [];
  const readiness = (withCompanies: boolean): Readiness => ({
    ready: true,
    detail: {
      company_files: {
        damaged: 1,
        rebuilding: 0,
        ...(withCompanies && { out_of_service: [{ company_id: company, state: 'damaged' }] }),
      },
      ...(withCompanies && { company_rebuilds: rebuilds }),
    },
  });
  const server = await startAdminServer({
    host: '127.0.0.1',
    port: 0,
    registry: createMetrics().registry,
    readiness,
    token: token ? readAdminToken(tokenFile) : undefined,
    rebuildCompany: (companyId) => {
      asked.push(companyId);
      if (companyId === 'nope') return { status: 400, error: 'not a company id: "nope"' };
      rebuilds.push({ companyId, status: 'running' });
      return { status: 202 };
    },
    rebuilds: () => rebuilds,
  });
  return { server, asked, url: (path: string) => `http://127.0.0.1:${server.port}${path}` };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A request fetch() cannot send as is (a body with a GET-less POST shape, a bare Content-Length). */
function raw(server: AdminServer, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method: 'POST', path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('admin server', () => {
  it('serves liveness, readiness and Prometheus metrics', async () => {
    const metrics = createMetrics(() => 10_000);
    let ready = false;
    const server = await startAdminServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      readiness: () => ({ ready, detail: { lag: ready ? 0 : 5000 } }),
    });
    const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
    try {
      expect((await fetch(url('/healthz'))).status).toBe(200);
      const notReady = await fetch(url('/readyz'));
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toEqual({ status: 'not_ready', lag: 5000 });
      ready = true;
      expect((await fetch(url('/readyz'))).status).toBe(200);

      metrics.events.inc({ table: 'sites', outcome: 'applied' }, 3);
      metrics.lastSourceTsMs = 7_500;
      const text = await (await fetch(url('/metrics'))).text();
      expect(text).toContain('pda_ingest_events_total{table="sites",outcome="applied"} 3');
      expect(text).toContain('pda_ingest_freshness_seconds 2.5');
      expect(text).toContain('pda_ingest_batch_duration_seconds_bucket');
      expect((await fetch(url('/nope'))).status).toBe(404);
      expect((await fetch(url('/healthz'), { method: 'POST' })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it('with the token: POST /rebuild starts a rebuild, GET /rebuild and /readyz name the companies', async () => {
    const { server, asked, url } = await adminPort(true);
    try {
      const started = await fetch(url(`/rebuild?company=${company}`), {
        method: 'POST',
        headers: bearer(TOKEN),
      });
      expect(started.status).toBe(202);
      expect(await started.json()).toEqual({ status: 'started', company_id: company });
      // The scheme is case-insensitive (RFC 9110), like the api's.
      const refused = await fetch(url('/rebuild?company=nope'), {
        method: 'POST',
        headers: { authorization: `bearer ${TOKEN}` },
      });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: 'not a company id: "nope"' });
      expect(await (await fetch(url('/rebuild'), { headers: bearer(TOKEN) })).json()).toEqual({
        rebuilds: [{ companyId: company, status: 'running' }],
      });
      const ready = await (await fetch(url('/readyz'), { headers: bearer(TOKEN) })).json();
      expect(ready).toEqual({
        status: 'ready',
        company_files: {
          damaged: 1,
          rebuilding: 0,
          out_of_service: [{ company_id: company, state: 'damaged' }],
        },
        company_rebuilds: [{ companyId: company, status: 'running' }],
      });
      expect((await fetch(url('/rebuild'), { method: 'DELETE', headers: bearer(TOKEN) })).status).toBe(405);
      expect(asked).toEqual([company, 'nope']);
    } finally {
      await server.close();
    }
  });

  it('with the token: no, a wrong or a malformed Authorization is 401 and starts nothing', async () => {
    const { server, asked, url } = await adminPort(true);
    try {
      for (const headers of [
        {},
        bearer('c0ffee'.repeat(7)), // a prefix of the token
        bearer(`${TOKEN}x`),
        bearer(TOKEN.toUpperCase()),
        { authorization: TOKEN },
        { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` },
        { authorization: `Bearer ${TOKEN} ${TOKEN}` },
      ]) {
        const post = await fetch(url(`/rebuild?company=${company}`), { method: 'POST', headers });
        expect(post.status, JSON.stringify(headers)).toBe(401);
        expect(post.headers.get('www-authenticate')).toBe('Bearer realm="pda-ingest-admin"');
        expect(await post.text()).not.toContain(company);
        const list = await fetch(url('/rebuild'), { headers });
        expect(list.status).toBe(401);
      }
      expect(asked).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('with the token: the shapes of a simple request are refused even with the token', async () => {
    const { server, asked, url } = await adminPort(true);
    const path = `/rebuild?company=${company}`;
    try {
      // What a page may send cross-origin without a preflight: no Authorization at all.
      for (const type of [
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'text/plain',
      ]) {
        expect(await raw(server, path, { 'content-type': type }, `company=${company}`)).toBe(401);
      }
      // The same shapes with the token (a header a page cannot add without asking): still refused.
      for (const type of [
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'text/plain',
      ]) {
        expect(
          await raw(server, path, { ...bearer(TOKEN), 'content-type': type }, `company=${company}`),
        ).toBe(415);
      }
      expect(await raw(server, path, { ...bearer(TOKEN), 'content-type': 'application/json' }, '{}')).toBe(
        415,
      );
      expect(await raw(server, path, { ...bearer(TOKEN), 'content-length': '2' }, '{}')).toBe(415);
      expect(await raw(server, path, { ...bearer(TOKEN), 'transfer-encoding': 'chunked' }, 'x')).toBe(415);
      // No preflight is ever granted: OPTIONS is a 405 without Access-Control-* headers.
      const preflight = await fetch(url(path), {
        method: 'OPTIONS',
        headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(405);
      expect([...preflight.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
      expect(asked).toEqual([]);
      // The plain shape the rebuild command sends: no body, the token.
      expect(await raw(server, path, { ...bearer(TOKEN), 'content-length': '0' })).toBe(202);
      expect(asked).toEqual([company]);
    } finally {
      await server.close();
    }
  });

  it('/readyz without the token counts the companies out of service and names none', async () => {
    for (const token of [true, false]) {
      const { server, url } = await adminPort(token);
      try {
        for (const headers of [{}, bearer('wrong'.repeat(8))]) {
          const ready = await fetch(url('/readyz'), { headers });
          expect(ready.status).toBe(200);
          const text = await ready.text();
          expect(text).not.toContain(company);
          expect(JSON.parse(text)).toEqual({ status: 'ready', company_files: { damaged: 1, rebuilding: 0 } });
        }
        expect((await fetch(url('/healthz'))).status).toBe(200);
        expect((await fetch(url('/metrics'))).status).toBe(200);
      } finally {
        await server.close();
      }
    }
  });

  it('without INGEST_ADMIN_TOKEN_FILE: /rebuild is 403 with one line saying what to set, whatever is sent', async () => {
    const { server, asked, url } = await adminPort(false);
    try {
      for (const headers of [{}, bearer(TOKEN)]) {
        const post = await fetch(url(`/rebuild?company=${company}`), { method: 'POST', headers });
        expect(post.status).toBe(403);
        expect(await post.json()).toEqual({ error: NO_ADMIN_TOKEN });
        expect((await fetch(url('/rebuild'), { headers })).status).toBe(403);
      }
      expect(NO_ADMIN_TOKEN).not.toContain('\n');
      expect(NO_ADMIN_TOKEN).toContain('INGEST_ADMIN_TOKEN_FILE');
      expect(asked).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('rebuild --company', () => {
  const main = fileURLToPath(new URL('../src/rebuild-main.ts', import.meta.url));
  const run = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [main, '--company', company],
        { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }),
      );
    });

  it('sends the token of INGEST_ADMIN_TOKEN_FILE and follows the rebuild to its outcome', async () => {
    const rebuilds: { companyId: string; status: string; result?: unknown }[] = [];
    const server = await startAdminServer({
      host: '127.0.0.1',
      port: 0,
      registry: createMetrics().registry,
      readiness: () => ({ ready: true, detail: {} }),
      token: readAdminToken(tokenFile),
      rebuildCompany: (companyId) => {
        rebuilds.push({ companyId, status: 'done', result: { companyId, rows: 3 } });
        return { status: 202 };
      },
      rebuilds: () => rebuilds,
    });
    try {
      const env = { INGEST_ADMIN_PORT: String(server.port) };
      const done = await run({ ...env, INGEST_ADMIN_TOKEN_FILE: tokenFile });
      expect(done.code, done.stderr).toBe(0);
      expect(JSON.parse(done.stdout)).toEqual({ companyId: company, rows: 3 });

      const without = await run(env);
      expect(without.code).toBe(2);
      expect(without.stderr.split('\n')[0]).toBe(
        'error: rebuild --company needs INGEST_ADMIN_TOKEN_FILE: the admin token file the running ingest was started with',
      );
      const wrongFile = join(dir, 'wrong-token');
      writeFileSync(wrongFile, 'f'.repeat(64));
      const wrong = await run({ ...env, INGEST_ADMIN_TOKEN_FILE: wrongFile });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr.split('\n')[0]).toMatch(/^error: send the admin token as Authorization: Bearer/);
      const missing = await run({ ...env, INGEST_ADMIN_TOKEN_FILE: join(dir, 'none') });
      expect(missing.code).toBe(2);
      expect(missing.stderr.split('\n')[0]).toBe(
        `error: invalid ingest configuration: INGEST_ADMIN_TOKEN_FILE: cannot read ${join(dir, 'none')}: ENOENT`,
      );
      expect(rebuilds).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
