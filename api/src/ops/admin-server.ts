/**
 * The admin port (API_ADMIN_HOST/API_ADMIN_PORT): /healthz (the process is alive and its event
 * loop answers) and /metrics (Prometheus text format). A plain node:http server beside the public
 * Fastify one, so metrics are never reachable where partners call and scraping them spends no
 * rate-limit budget. The same shape as ingest's (ingest/src/ops/admin-server.ts), which also
 * serves /readyz; the api's readiness is /v1/health on the public port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startAdminServer(options: {
  host: string;
  port: number;
  registry: Registry;
}): Promise<AdminServer> {
  const { registry } = options;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'method not allowed' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => json(500, { error: 'metrics unavailable' }),
      );
      return;
    }
    json(404, { error: 'not found', paths: ['/healthz', '/metrics'] });
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
