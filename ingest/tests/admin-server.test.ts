import { describe, expect, it } from 'vitest';
import { startAdminServer } from '../src/ops/admin-server.ts';
import { createMetrics } from '../src/ops/metrics.ts';

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

  it('starts a per-company rebuild on POST /rebuild and lists them on GET /rebuild', async () => {
    const metrics = createMetrics();
    const asked: string[] = [];
    const rebuilds: unknown[] = [];
    const server = await startAdminServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      readiness: () => ({ ready: true, detail: {} }),
      rebuildCompany: (companyId) => {
        asked.push(companyId);
        if (companyId === 'nope') return { status: 400, error: 'not a company id: "nope"' };
        rebuilds.push({ companyId, status: 'running' });
        return { status: 202 };
      },
      rebuilds: () => rebuilds,
    });
    const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
    const company = 'aaaaaaaa-0000-4000-8000-00000000000a';
    try {
      const started = await fetch(url(`/rebuild?company=${company}`), { method: 'POST' });
      expect(started.status).toBe(202);
      expect(await started.json()).toEqual({ status: 'started', company_id: company });
      const refused = await fetch(url('/rebuild?company=nope'), { method: 'POST' });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({ error: 'not a company id: "nope"' });
      expect(await (await fetch(url('/rebuild'))).json()).toEqual({
        rebuilds: [{ companyId: company, status: 'running' }],
      });
      expect((await fetch(url('/rebuild'), { method: 'DELETE' })).status).toBe(405);
      expect(asked).toEqual([company, 'nope']);
    } finally {
      await server.close();
    }
  });
});
