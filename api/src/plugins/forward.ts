import replyFrom from '@fastify/reply-from';
import type { OwnershipWriter } from '@pda/projections/model';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Dispatcher } from 'undici';
import type { AppOptions } from '../app-options.ts';
import {
  HOP_CLIENT_HEADER,
  HOP_FROM_HEADER,
  HOP_HEADERS,
  HOP_REQUEST_ID_HEADER,
  HOP_SECRET_HEADER,
  type Hop,
  readHop,
  secretMatcher,
} from '../forward/hop.ts';
import { hopDispatcher } from '../forward/hop-dispatcher.ts';
import { ownershipView } from '../forward/ownership-view.ts';
import { plainHttpOwners } from '../forward/plain-http.ts';
import { ApiError } from '../http/api-error.ts';
import { sendProblem } from '../http/send-problem.ts';

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

/**
 * Request headers never forwarded: hop-by-hop (RFC 9110 §7.6.1; reply-from drops Connection,
 * Transfer-Encoding, Host and the names Connection lists itself), and our own hop headers, which
 * are set again below (a partner's copies must never travel under our secret).
 */
const REQUEST_HOP_BY_HOP = [
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
];

/** Response headers of the owner's connection, not of its answer: this node's connection has its own. */
const RESPONSE_HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'trailer',
  'upgrade',
];

const OWNER_UNREACHABLE =
  'The node that holds this company cannot be reached right now; retry after the number of seconds in Retry-After.';
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

    function forward(
      request: FastifyRequest,
      reply: FastifyReply,
      owner: OwnershipWriter,
      waitMs: number,
    ): FastifyReply {
      const client = request.ip;
      const peer = request.socket.remoteAddress;
      // Every later line of this request (reply-from's failure warning, the completion line) names the owner.
      const log = request.log.child({ forwarded_to: owner.name });
      request.log = log;
      reply.log = log;
      const gone = new AbortController();
      const forget = hops.track(String(request.id), gone.signal);
      reply.raw.once('close', () => {
        forget();
        if (reply.raw.writableFinished) return;
        // reply-from logs every failed hop as a warning ('response errored'): a partner that went
        // away is no failure of the hop (pda_api_forwarded_total{outcome="partner_gone"} counts it).
        request.log = log.child({}, { level: 'error' });
        gone.abort();
      });
      try {
        reply.from(`${owner.api}${request.raw.url ?? request.url}`, {
          timeout: timeoutMs + waitMs,
          // reply-from retries a GET answered 503 (up to 10 times, after its Retry-After) by default:
          // the owner's 503s (rebuilding, overloaded) are the partner's to see, at once. The one
          // retry: a kept-alive connection the owner had closed (a restart, its idle timeout) fails
          // before any answer; every operation here is a GET, so it is sent once more at once.
          retryDelay: ({ err, attempt }) => (attempt === 0 && isClosedConnection(err) ? 1 : null),
          rewriteRequestHeaders: (_request, headers) => {
            const out = { ...headers };
            for (const name of REQUEST_HOP_BY_HOP) delete out[name];
            for (const name of HOP_HEADERS) delete out[name];
            out[HOP_SECRET_HEADER] = secret;
            out[HOP_FROM_HEADER] = view.self;
            out[HOP_CLIENT_HEADER] = client;
            out[HOP_REQUEST_ID_HEADER] = String(request.id);
            // The usual chain, for an owner that lists this node in API_TRUST_PROXY.
            const chain = out['x-forwarded-for'];
            if (peer !== undefined)
              out['x-forwarded-for'] = typeof chain === 'string' && chain !== '' ? `${chain}, ${peer}` : peer;
            return out;
          },
          rewriteHeaders: (headers) => {
            // Set here before the hop; the owner's answer says (or omits) it for its own files.
            reply.removeHeader('data-current-as-of');
            const out = { ...headers };
            for (const name of RESPONSE_HOP_BY_HOP) delete out[name];
            return out;
          },
          onResponse: (_request, _reply, res) => {
            app.metrics.recordForward('served_by_owner');
            // The budget was spent here, not on the owner: a 304 gives it back here.
            if (reply.statusCode === 304) {
              void app.refundRateLimit(request, reply).then(() => reply.send(res.stream));
            } else {
              reply.send(res.stream);
            }
          },
          onError: () => {
            // Nobody to answer: the connection is closed (as when the owner answers after it closed,
            // which reply-from drops).
            if (gone.signal.aborted) {
              app.metrics.recordForward('partner_gone');
              return;
            }
            // reply-from has logged the failure (one warning, 'response errored', with the owner's
            // name from the child logger below and the network error: never a header).
            app.metrics.recordForward('owner_unreachable');
            sendProblem(
              request,
              reply,
              new ApiError('service_unavailable', OWNER_UNREACHABLE, { headers: retryAfter }),
            );
          },
        });
      } catch (error) {
        // reply-from refuses a path with a '..' segment before sending anything: the owner would
        // refuse it too (no contract path or id holds one).
        request.log.info({ err: error }, 'request path not forwardable');
        return sendProblem(request, reply, new ApiError('bad_request', 'The request path is not valid.'));
      }
      return reply;
    }
  },
  {
    name: 'pda-forward',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-auth', 'pda-problems', 'pda-metrics', 'pda-fair-shares'],
  },
);

/** A connection that broke before the owner answered: undici's socket error, or a reset. */
function isClosedConnection(error: Error | undefined): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

/** The `wait` of a change-feed request, before validation (the owner validates it): 0–30 s. */
function waitSeconds(query: unknown): number {
  const value = (query as Record<string, unknown> | null)?.wait;
  const seconds = typeof value === 'string' || typeof value === 'number' ? Number(value) : 0;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_WAIT_S) : 0;
}
