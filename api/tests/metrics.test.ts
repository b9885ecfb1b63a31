import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AdminServer } from '@pda/admin-http';
import { FIXTURE_TS_MS, metricSample } from '@pda/projections/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createMetrics } from '../src/observability/metrics.ts';
import { startAdmin } from '../src/server.ts';
import { createFixture, type Fixture } from './support/fixture.ts';
import { bearer, testApp, testConfig } from './support/test-app.ts';

/**
 * Metrics on the admin port (api/README.md, "Metrics"): scraped over HTTP from the admin server
 * server.ts starts, after real requests through the whole app; never served on the public port.
 */

const HOUR_MS = 3_600_000;

let f: Fixture;
let app: FastifyInstance | undefined;
let admin: AdminServer | undefined;

beforeAll(() => {
  f = createFixture();
});
afterAll(() => f.cleanup());
afterEach(async () => {
  await admin?.close();
  await app?.close();
  admin = undefined;
  app = undefined;
});

async function withAdmin(
  dataDir: string,
  options: { env?: Record<string, string>; now?: () => number } = {},
): Promise<{ app: FastifyInstance; scrape: () => Promise<string>; url: (path: string) => string }> {
  const env = { API_ADMIN_PORT: '0', ...options.env };
  app = await testApp(dataDir, { ...options, env });
  admin = await startAdmin(app, testConfig(dataDir, env));
  const url = (path: string) => `http://127.0.0.1:${admin?.port}${path}`;
  const scrape = async () => {
    const response = await fetch(url('/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };
  return { app, scrape, url };
}

describe('admin port', () => {
  test('request counters, durations and gauges move with real requests', async () => {
    const { app, scrape } = await withAdmin(f.dataDir, { now: () => Date.now() + HOUR_MS });
    for (let i = 0; i < 3; i++) {
      expect((await app.inject({ url: '/v1/sites', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    }
    expect((await app.inject({ url: '/v1/sites' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    expect((await app.inject({ url: '/v1/nowhere/12345' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: '/v1/sites' })).statusCode).toBe(405);
    expect((await app.inject({ url: '/v1/%zz' })).statusCode).toBe(400);

    const text = await scrape();
    expect(metricSample(text, 'pda_api_requests_total{operation="listSites",status="200"}')).toBe(3);
    expect(metricSample(text, 'pda_api_requests_total{operation="listSites",status="401"}')).toBe(1);
    expect(metricSample(text, 'pda_api_requests_total{operation="getMe",status="200"}')).toBe(1);
    // Unknown paths share one label: the URL never becomes a label value.
    expect(metricSample(text, 'pda_api_requests_total{operation="unmatched",status="404"}')).toBe(1);
    expect(metricSample(text, 'pda_api_requests_total{operation="unmatched",status="405"}')).toBe(1);
    // A malformed URL never reaches a route's hooks (errors/framework-error.ts) and is counted too.
    expect(metricSample(text, 'pda_api_requests_total{operation="unmatched",status="400"}')).toBe(1);
    expect(text).not.toContain('nowhere');

    expect(metricSample(text, 'pda_api_request_duration_seconds_count{operation="listSites"}')).toBe(4);
    expect(
      metricSample(text, 'pda_api_request_duration_seconds_bucket{le="+Inf",operation="listSites"}'),
    ).toBe(4);
    expect(metricSample(text, 'pda_api_request_duration_seconds_sum{operation="listSites"}')).toBeGreaterThan(
      0,
    );
    expect(text).toContain('pda_api_request_duration_seconds_bucket{le="0.001",operation="getMe"}');

    // /v1/sites opened company A's file. Staleness is measured from the source time of the
    // fixture's changes (no heartbeat recorded), with the clock an hour ahead.
    expect(metricSample(text, 'pda_api_open_company_files')).toBe(1);
    // Three authorised list requests: the first opened the file, the next two found it open.
    expect(metricSample(text, 'pda_api_company_file_lookups_total{result="miss"}')).toBe(1);
    expect(metricSample(text, 'pda_api_company_file_lookups_total{result="hit"}')).toBe(2);
    expect(metricSample(text, 'pda_api_company_files_evicted_total')).toBe(0);
    expect(metricSample(text, 'pda_api_open_company_files_max')).toBeGreaterThan(1);
    const staleness = metricSample(text, 'pda_api_projection_staleness_seconds');
    const expected = (Date.now() + HOUR_MS - FIXTURE_TS_MS) / 1000;
    expect(staleness).toBeGreaterThan(expected - 600);
    expect(staleness).toBeLessThanOrEqual(expected + 1);
    expect(metricSample(text, 'pda_api_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE pda_api_rate_limited_total counter');
  });

  test('prepared statements: held within API_MAX_STATEMENTS_PER_FILE per open file, evictions counted, answers unchanged', async () => {
    const { app, scrape } = await withAdmin(f.dataDir, { env: { API_MAX_STATEMENTS_PER_FILE: '2' } });
    const sorts = ['name', '-name', 'created_at', '-updated_at', 'id'];
    const first = new Map<string, string>();
    for (const round of [1, 2]) {
      for (const sort of sorts) {
        const response = await app.inject({ url: `/v1/sites?sort=${sort}`, headers: bearer(f.keys.a) });
        expect(response.statusCode).toBe(200);
        // The second round re-prepares what the first evicted: the same answers.
        if (round === 1) first.set(sort, response.body);
        else expect(response.body, sort).toBe(first.get(sort));
      }
    }
    const text = await scrape();
    // control.sqlite and company A's file, at most two statements each.
    expect(metricSample(text, 'pda_api_statement_cache_size')).toBeGreaterThan(0);
    expect(metricSample(text, 'pda_api_statement_cache_size')).toBeLessThanOrEqual(4);
    expect(metricSample(text, 'pda_api_statement_cache_evictions_total')).toBeGreaterThan(sorts.length);
  });

  test('a 429 counts as rate_limit_exceeded', async () => {
    const { app, scrape } = await withAdmin(f.dataDir, { env: { API_RATE_LIMIT_MAX: '1' } });
    expect((await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) })).statusCode).toBe(200);
    const refused = await app.inject({ url: '/v1/me', headers: bearer(f.keys.a) });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe('rate_limit_exceeded');

    const text = await scrape();
    expect(metricSample(text, 'pda_api_rate_limited_total{reason="rate_limit_exceeded"}')).toBe(1);
    expect(metricSample(text, 'pda_api_requests_total{operation="getMe",status="429"}')).toBe(1);
    expect(metricSample(text, 'pda_api_rate_limited_total{reason="under_pressure"}')).toBeUndefined();
  });

  test('a request shed under pressure (503) counts as under_pressure', async () => {
    const { app, scrape } = await withAdmin(f.dataDir, {
      env: { API_MAX_HEAP_USED_BYTES: '1', API_UNDER_PRESSURE_SAMPLE_INTERVAL_MS: '100' },
    });
    const deadline = Date.now() + 5_000;
    while (!app.isUnderPressure()) {
      if (Date.now() > deadline) throw new Error('under-pressure never sampled the heap');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const shed = await app.inject({ url: '/v1/health' });
    expect(shed.statusCode).toBe(503);
    expect(shed.json().code).toBe('service_unavailable');

    const text = await scrape();
    expect(metricSample(text, 'pda_api_rate_limited_total{reason="under_pressure"}')).toBe(1);
    expect(metricSample(text, 'pda_api_requests_total{operation="getHealth",status="503"}')).toBe(1);
  });

  test('staleness is absent while the projections cannot be read', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'pda-api-metrics-empty-'));
    try {
      const { scrape } = await withAdmin(empty);
      const text = await scrape();
      expect(text).toContain('# TYPE pda_api_projection_staleness_seconds gauge');
      expect(metricSample(text, 'pda_api_projection_staleness_seconds')).toBeUndefined();
      expect(metricSample(text, 'pda_api_open_company_files')).toBe(0);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test('liveness; anything else is 404 or 405', async () => {
    const { url } = await withAdmin(f.dataDir);
    const healthz = await fetch(url('/healthz'));
    expect(healthz.status).toBe(200);
    expect(await healthz.json()).toEqual({ status: 'ok' });
    expect((await fetch(url('/v1/sites'))).status).toBe(404);
    expect((await fetch(url('/metrics'), { method: 'POST' })).status).toBe(405);
  });
});

describe('public port', () => {
  test('GET /metrics is the usual 404 problem, not metrics', async () => {
    app = await testApp(f.dataDir);
    await app.inject({ url: '/v1/health' });
    const response = await app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ code: 'not_found', status: 404 });
    expect(response.body).not.toContain('pda_api_');
  });
});

describe('recording', () => {
  test('never throws (a request never fails because of metrics): a failure goes to onFailure', async () => {
    const failures: unknown[] = [];
    const companyFiles = () => ({ hits: 0, misses: 0, evictions: 0, open: 0, max: 1 });
    const statements = () => ({ held: 0, evicted: 0, maxPerFile: 256 });
    const metrics = createMetrics({ companyFiles, statements, stalenessSeconds: () => null }, (error) =>
      failures.push(error),
    );
    expect(() => metrics.recordRequest('getMe', 200, Number.NaN)).not.toThrow();
    expect(failures).toHaveLength(1);
    metrics.recordRequest('getMe', 200, 0.002);
    const text = await metrics.registry.metrics();
    expect(metricSample(text, 'pda_api_request_duration_seconds_count{operation="getMe"}')).toBe(1);
    expect(metricSample(text, 'pda_api_request_duration_seconds_bucket{le="0.0025",operation="getMe"}')).toBe(
      1,
    );
    expect(metricSample(text, 'pda_api_request_duration_seconds_bucket{le="0.001",operation="getMe"}')).toBe(
      0,
    );
  });
});
