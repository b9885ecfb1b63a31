import replyFrom from '@fastify/reply-from';
import fp from 'fastify-plugin';
import type { Dispatcher } from 'undici';
import type { AppOptions } from '../app-options.ts';
import { ApiError } from '../errors/api-error.ts';
import { sendProblem } from '../errors/send-problem.ts';
import { type Hop, readHop, secretMatcher } from '../forward/hop.ts';
import { hopDispatcher } from '../forward/hop-dispatcher.ts';
import { ownershipView } from '../forward/ownership-view.ts';
import { plainHttpOwners } from '../forward/plain-http.ts';
import { ownerForwarder } from '../forward/send-to-owner.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The hop headers of a request another api node forwarded (plugins/forward.ts): trusted when
     * they carry the shared secret; null when the request carries none or forwarding is off.
     */
    hop: Hop | null;
  }
}

/**
 * Writers split by company (api/README.md, "Writers split by company"; docs/deployment-replicas.md,
 * "Writers split by company: requests"). Every node holds every key, grant and company row, but
 * only the company files of the partitions it serves. A request to an operation that reads a
 * company file is authenticated and metered here as on any node (auth and rate-limit plugins),
 * then, in preValidation (after auth resolved the company, before the parameters are validated:
 * the owner validates and answers them), either served here (this writer serves the company's
 * partition) or forwarded in ONE hop to the serving writer's api with @fastify/reply-from over
 * undici: same method, path and query, the partner's headers less the hop-by-hop ones, plus the
 * hop headers (http/../forward/hop.ts). The owner's answer streams back unchanged: status, headers,
 * body (compressed bytes stay compressed). The owner trusts a hop with the right secret: it does
 * not meter it again (plugins/rate-limit.ts) and never forwards it again — a hop for a company it
 * does not serve answers 503 (ownership files out of step). An owner that cannot be reached (refused,
 * reset, timed out) answers 503 service_unavailable with Retry-After, never a wrong or empty page.
 * A partner whose connection closes before the answer has come back aborts the hop
 * (forward/hop-dispatcher.ts): the owner ends the request at once, a held one frees its slot.
 *
 * The request is counted in progress here, where it arrived (plugins/fair-shares.ts, whose hook
 * runs before this one), not on the owner; a change-feed request with `wait` moves to its key's
 * held share here before its hop (it may wait that long on the owner), and the owner counts it
 * again in its own held share only if it holds it.
 *
 * Without API_OWNERSHIP_FILE nothing here runs and hop headers are ignored.
 */

/**
 * Operations that take a key but read only control.sqlite, which is complete on every node:
 * answered where the request arrives (no hop, and they keep working while the owner is down).
 * Every other operation that takes a key is company-scoped and goes to the owner.
 */
const LOCAL_OPERATIONS: ReadonlySet<string> = new Set(['getMe', 'listScopes']);

/** The change feed's long poll: its hop may wait `wait` seconds (at most 30, the contract's bound) longer. */
const LONG_POLL_OPERATION = 'listChanges';
const MAX_WAIT_S = 30;

const OUT_OF_STEP = 'This company is moving between nodes; retry after the number of seconds in Retry-After.';

export default fp(
  async (app, options: AppOptions) => {
    app.decorateRequest('hop', null);
    const settings = app.config.forwarding;
    if (settings === undefined) return;

    // Sends the secret file's first line; accepts either line during a rotation (config.ts).
    const { secret, timeoutMs } = settings;
    const matches = secretMatcher(settings.acceptedSecrets);
    const view = ownershipView(
      settings.ownershipFile,
      settings.ownership,
      settings.writerName,
      app.log,
      options.now,
      // As often as the data directory is checked for a rebuild swap (API_REOPEN_CHECK_MS).
      app.config.reopenCheckMs,
    );
    const retryAfter = { 'retry-after': String(settings.retryAfterSeconds) };
    const exposed = plainHttpOwners(settings.ownership, settings.writerName);
    if (exposed.length > 0) {
      app.log.warn(
        { writers: exposed },
        "forwarding: these owners are plain http on another machine; hops carry partners' keys and the hop secret in clear (use https)",
      );
    }

    const hops = hopDispatcher({
      // One connection per request in flight, however many long polls wait: no queue behind them.
      connections: null,
      pipelining: 1,
      // Certificates checked: undici's default, which reply-from's own agent turned off (its `tls`).
      connect: { timeout: settings.connectTimeoutMs, rejectUnauthorized: true },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
    const forward = ownerForwarder({
      secret,
      self: view.self,
      timeoutMs,
      retryAfter,
      hops,
      recordForward: (outcome) => app.metrics.recordForward(outcome),
      refundRateLimit: (request, reply) => app.refundRateLimit(request, reply),
    });
    await app.register(replyFrom, {
      disableCache: true,
      disableRequestLogging: true,
      // reply-from's types admit only undici's own classes; it takes any object with `request`.
      undici: hops.agent as unknown as Dispatcher,
    });

    app.addHook('onRequest', async (request, reply) => {
      const operation = request.routeOptions.config.operation;
      if (operation === undefined || operation.anonymous) return;
      const hop = readHop(request.headers, matches);
      if (hop === undefined) return;
      request.hop = hop;
      if (hop.trusted) {
        // The owner's lines say where the request came from: the partner's address is the hop's.
        const log = request.log.child({ hop_from: hop.from, hop_client: hop.client });
        request.log = log;
        reply.log = log;
      }
    });

    app.addHook('preValidation', async (request, reply) => {
      const operation = request.routeOptions.config.operation;
      if (operation === undefined || operation.anonymous) return;
      const hop = request.hop;
      if (hop !== null && !hop.trusted) {
        app.metrics.recordForward('hop_refused');
        // Never the value sent: it may be a near miss of the secret.
        request.log.warn(
          { peer: request.socket.remoteAddress },
          'forwarding header with a wrong secret refused',
        );
        throw new ApiError(
          'unauthenticated',
          'This request carries a header reserved for forwarding between api nodes, and it is not valid.',
          { headers: { 'www-authenticate': 'Bearer realm="public-data-api", error="invalid_token"' } },
        );
      }
      if (LOCAL_OPERATIONS.has(operation.operationId)) return;
      const tenant = request.tenant;
      if (tenant === null) return;
      const owner = view.owner(tenant.company.id);
      if (owner.name === view.self) {
        if (hop?.trusted) app.metrics.recordForward('hop_served');
        return;
      }
      if (hop?.trusted) {
        // Forwarded once already: never again. The sender's ownership file says this node serves
        // the company, this node's says another does.
        app.metrics.recordForward('hop_not_owner');
        request.log.warn(
          { company: tenant.company.id, owner: owner.name, from: hop.from },
          'forwarded request for a company this writer does not serve: ownership files out of step',
        );
        return sendProblem(
          request,
          reply,
          new ApiError('service_unavailable', OUT_OF_STEP, { headers: retryAfter }),
        );
      }
      const waitMs = operation.operationId === LONG_POLL_OPERATION ? waitSeconds(request.query) * 1000 : 0;
      // 429 beyond the key's held share; released when the answer is sent or the partner leaves.
      if (waitMs > 0) app.fairShares.hold(request);
      return forward(request, reply, owner, waitMs);
    });
  },
  {
    name: 'pda-forward',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-auth', 'pda-problems', 'pda-metrics', 'pda-fair-shares'],
  },
);

/** The `wait` of a change-feed request, before validation (the owner validates it): 0–30 s. */
function waitSeconds(query: unknown): number {
  const value = (query as Record<string, unknown> | null)?.wait;
  const seconds = typeof value === 'string' || typeof value === 'number' ? Number(value) : 0;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_WAIT_S) : 0;
}
