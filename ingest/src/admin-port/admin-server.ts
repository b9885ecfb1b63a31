/**
 * Ingest's admin HTTP port (the shared server of @pda/admin-http): /healthz (the process is alive
 * and its event loop answers), /readyz (caught up: connected to the group and lag ≤
 * INGEST_READY_MAX_LAG), /metrics (Prometheus text format). Readiness is what compose files and
 * tests wait on; liveness never depends on Kafka. These three are open: they change nothing and
 * name no company.
 *
 * `POST /rebuild?company=<uuid>` starts a per-company rebuild in this process (202; 400 not a
 * company id, 409 one is running or not consuming yet) and `GET /rebuild` lists them with their
 * outcome (live-rebuild/company-rebuild.ts). A rebuild takes a served company out of service until its
 * backfill ends, so both need the admin token (../admin-token.ts, INGEST_ADMIN_TOKEN_FILE) as
 * `Authorization: Bearer`; without the setting they are refused (403), wherever the port listens.
 * /readyz names companies (out of service, rebuilt) only to the token too.
 *
 * Never a CORS "simple request" (ingest/README.md, "Operations: admin port"): the port answers no
 * preflight, and a POST with a body or any Content-Type (form, text) is refused (415) even with the
 * token.
 */
import {
  type AdminOperations,
  type AdminServer,
  hasBody,
  type Readiness,
  startAdminServer as startAdminHttp,
} from '@pda/admin-http';
import type { Registry } from 'prom-client';
import type { AdminToken } from '../admin-token.ts';

export type { AdminServer, Readiness };

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
  const { rebuildCompany, rebuilds } = options;
  const operations: AdminOperations | undefined =
    rebuildCompany && rebuilds
      ? {
          noToken: NO_ADMIN_TOKEN,
          unauthorized: 'send the admin token as Authorization: Bearer <token> (INGEST_ADMIN_TOKEN_FILE)',
          realm: 'pda-ingest-admin',
          routes: {
            '/rebuild': {
              methods: ['GET', 'POST'],
              answer(req, url) {
                if (req.method === 'GET') return { status: 200, body: { rebuilds: rebuilds() } };
                if (hasBody(req)) {
                  return {
                    status: 415,
                    body: {
                      error: 'POST /rebuild takes no body and no Content-Type; the company is in the query',
                    },
                  };
                }
                const companyId = url.searchParams.get('company') ?? '';
                const answer = rebuildCompany(companyId);
                return {
                  status: answer.status,
                  body: answer.error ? { error: answer.error } : { status: 'started', company_id: companyId },
                };
              },
            },
          },
        }
      : undefined;
  return startAdminHttp({
    host: options.host,
    port: options.port,
    registry: options.registry,
    readiness: options.readiness,
    token: options.token,
    operations,
  });
}
