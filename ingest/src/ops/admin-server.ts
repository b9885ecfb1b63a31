/**
 * The admin HTTP port: /healthz (the process is alive and its event loop answers), /readyz (caught
 * up: connected to the group and lag ≤ INGEST_READY_MAX_LAG), /metrics (Prometheus text format).
 * Readiness is what compose files and tests wait on; liveness never depends on Kafka.
 *
 * `POST /rebuild?company=<uuid>` starts a per-company rebuild in this process (202; 400 not a
 * company id, 409 one is running or not consuming yet) and `GET /rebuild` lists them with their
 * outcome (rebuild/company-rebuild.ts). The port listens on loopback by default (INGEST_ADMIN_HOST):
 * whoever reaches it can start rebuilds.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface Readiness {
  readonly ready: boolean;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startAdminServer(options: {
  host: string;
  port: number;
  registry: Registry;
  readiness: () => Readiness;
  rebuildCompany?: (companyId: string) => { status: number; error?: string };
  rebuilds?: () => readonly unknown[];
}): Promise<AdminServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (path === '/rebuild' && options.rebuildCompany && options.rebuilds) {
      if (req.method === 'GET') return json(200, { rebuilds: options.rebuilds() });
      if (req.method !== 'POST') return json(405, { error: 'method not allowed' });
      const companyId = new URL(req.url ?? '/', 'http://admin').searchParams.get('company') ?? '';
      const answer = options.rebuildCompany(companyId);
      return json(
        answer.status,
        answer.error ? { error: answer.error } : { status: 'started', company_id: companyId },
      );
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'method not allowed' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const r = options.readiness();
      return json(r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', ...r.detail });
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        () => json(500, { error: 'metrics unavailable' }),
      );
      return;
    }
    json(404, { error: 'not found', paths: ['/healthz', '/readyz', '/metrics', '/rebuild'] });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
