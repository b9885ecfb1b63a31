/**
 * The admin HTTP port of both deployables (admin-http/README.md): a plain node:http server beside
 * the process's real work, so liveness, readiness and metrics are never reachable where partners
 * call, and scraping them spends no rate-limit budget.
 *
 * - `/healthz`: 200 while the process and its event loop answer (liveness).
 * - `/readyz` (when the deployable passes `readiness`): 200 or 503 with the deployable's detail;
 *   the detail may name more to a caller with the admin token (ingest's company lists).
 * - `/metrics`: the registry's Prometheus text.
 * - token-guarded operations (when the deployable passes `operations`, ingest's `/rebuild`): only
 *   with `Authorization: Bearer <token>`; without a configured token refused to everyone (403),
 *   wherever the port listens: a loopback listener still takes requests from every local user and,
 *   through DNS rebinding, from web pages.
 *
 * Never a CORS "simple request": the Authorization header makes a browser ask first, and this port
 * answers no preflight (OPTIONS is a 405 without Access-Control-* headers). Every other method than
 * GET and HEAD is a 405 outside the operations, which list their own.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What /metrics needs of a prom-client Registry. */
export interface MetricsRegistry {
  metrics(): Promise<string>;
  readonly contentType: string;
}

export interface Readiness {
  readonly ready: boolean;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** The admin token as the port uses it: whether an `Authorization` header carries it. */
export interface BearerToken {
  accepts(authorization: string | undefined): boolean;
}

/** A JSON answer of an operation. */
export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** An operation behind the admin token, answered only once the token was checked. */
export interface AdminOperation {
  /** Any other method is a 405 (before the token is looked at). */
  readonly methods: readonly string[];
  answer(req: IncomingMessage, url: URL): AdminAnswer;
}

export interface AdminOperations {
  /** By path (`/rebuild`). */
  readonly routes: Readonly<Record<string, AdminOperation>>;
  /** The 403's error when the process has no token: one line saying what to set. */
  readonly noToken: string;
  /** The 401's error (no or a wrong token) and the realm of its `WWW-Authenticate: Bearer`. */
  readonly unauthorized: string;
  readonly realm: string;
}

export interface AdminServerOptions {
  readonly host: string;
  /** 0 picks a free port (`AdminServer.port` says which). */
  readonly port: number;
  readonly registry: MetricsRegistry;
  /** Serves /readyz; `authorized`: the request carried the token, so the detail may say more. */
  readonly readiness?: ((authorized: boolean) => Readiness) | undefined;
  /** Unset: the operations, and what readiness keeps to the token, are refused to everyone. */
  readonly token?: BearerToken | undefined;
  readonly operations?: AdminOperations | undefined;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const { registry, readiness, token, operations } = options;
  const routes = operations?.routes ?? {};
  const paths = ['/healthz', ...(readiness ? ['/readyz'] : []), '/metrics', ...Object.keys(routes)];
  const authorized = (req: IncomingMessage) => token?.accepts(req.headers.authorization) ?? false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    const operation = operations && Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (operations && operation) {
      if (!operation.methods.includes(req.method ?? '')) return json(405, { error: 'method not allowed' });
      if (!token) return json(403, { error: operations.noToken });
      if (!authorized(req)) {
        return json(
          401,
          { error: operations.unauthorized },
          { 'www-authenticate': `Bearer realm="${operations.realm}"` },
        );
      }
      const answer = operation.answer(req, new URL(req.url ?? '/', 'http://admin'));
      return json(answer.status, answer.body);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'method not allowed' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz' && readiness) {
      const r = readiness(authorized(req));
      return json(r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', ...r.detail });
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => json(500, { error: 'metrics unavailable' }),
      );
      return;
    }
    json(404, { error: 'not found', paths });
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

/**
 * A Content-Type (the three a form or a plain fetch may send without asking first) or any body: an
 * operation that changes state takes neither, so no shape a page may send unasked reaches it.
 */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (
    req.headers['content-type'] !== undefined ||
    req.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}
