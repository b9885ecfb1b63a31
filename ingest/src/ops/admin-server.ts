/**
 * The admin HTTP port: /healthz (the process is alive and its event loop answers), /readyz (caught
 * up: connected to the group and lag ≤ INGEST_READY_MAX_LAG), /metrics (Prometheus text format).
 * Readiness is what compose files and tests wait on; liveness never depends on Kafka. These three
 * are open: they change nothing and name no company.
 *
 * `POST /rebuild?company=<uuid>` starts a per-company rebuild in this process (202; 400 not a
 * company id, 409 one is running or not consuming yet) and `GET /rebuild` lists them with their
 * outcome (rebuild/company-rebuild.ts). A rebuild takes a served company out of service until its
 * backfill ends, so both need the admin token (ops/admin-token.ts, INGEST_ADMIN_TOKEN_FILE) as
 * `Authorization: Bearer`; without the setting they are refused (403), wherever the port listens:
 * a loopback listener still takes requests from every local user and, through DNS rebinding,
 * from web pages. /readyz names companies (out of service, rebuilt) only to the token too.
 *
 * Never a CORS "simple request" (ingest/README.md, "Operations: admin port"): the Authorization
 * header makes a browser ask first, and this port answers no preflight (OPTIONS is a 405 without
 * Access-Control-* headers); a POST with a body or any Content-Type (form, text) is refused (415)
 * even with the token.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { AdminToken } from './admin-token.ts';

export interface Readiness {
  readonly ready: boolean;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/** One line, in the 403 of a port without a token, for whoever calls POST /rebuild. */
export const NO_ADMIN_TOKEN =
  'company rebuilds over the admin port need a token: start ingest with INGEST_ADMIN_TOKEN_FILE and send Authorization: Bearer <token> (ingest/README.md, "Operations: admin port")';

export async function startAdminServer(options: {
  host: string;
  port: number;
  registry: Registry;
  /** `withCompanies`: the request carried the token, so the detail may name companies. */
  readiness: (withCompanies: boolean) => Readiness;
  /** Unset: /rebuild and the company lists of /readyz are refused to everyone. */
  token?: AdminToken | undefined;
  rebuildCompany?: (companyId: string) => { status: number; error?: string };
  rebuilds?: () => readonly unknown[];
}): Promise<AdminServer> {
  const token = options.token;
  const authorized = (req: IncomingMessage) => token?.accepts(req.headers.authorization) ?? false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (path === '/rebuild' && options.rebuildCompany && options.rebuilds) {
      if (req.method !== 'GET' && req.method !== 'POST') return json(405, { error: 'method not allowed' });
      if (!token) return json(403, { error: NO_ADMIN_TOKEN });
      if (!authorized(req)) {
        return json(
          401,
          { error: 'send the admin token as Authorization: Bearer <token> (INGEST_ADMIN_TOKEN_FILE)' },
          { 'www-authenticate': 'Bearer realm="pda-ingest-admin"' },
        );
      }
      if (req.method === 'GET') return json(200, { rebuilds: options.rebuilds() });
      if (hasBody(req)) {
        return json(415, {
          error: 'POST /rebuild takes no body and no Content-Type; the company is in the query',
        });
      }
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
      const r = options.readiness(authorized(req));
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

/** A Content-Type (the three a form or a plain fetch may send without asking first), or any body. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (
    req.headers['content-type'] !== undefined ||
    req.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}
