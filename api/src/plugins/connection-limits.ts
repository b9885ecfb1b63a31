import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import {
  applyTimeouts,
  capConnectionsPerAddress,
  InFlightPerAddress,
  trustedPeer,
} from '../connections/connection-limits.ts';
import { ApiError } from '../errors/api-error.ts';
import { sendProblem } from '../errors/send-problem.ts';

/** Seconds a client over its address's cap is asked to wait: a request in flight ends in ms. */
const RETRY_AFTER_S = 1;

/**
 * Connection discipline (api/README.md, "Connections"; connections/connection-limits.ts), on the public
 * server Fastify built, before it listens:
 * - the headers, request and keep-alive timeouts;
 * - at most API_MAX_CONNECTIONS_PER_ADDRESS connections per peer address, closed on arrival
 *   beyond it and counted in pda_api_rate_limited_total{reason="connections_per_address"} — except
 *   for trusted proxies (API_TRUST_PROXY), whose connections carry many clients;
 * - for requests through a trusted proxy, at most as many requests in flight per forwarded client
 *   address (request.ip): beyond it a 429 rate_limit_exceeded problem with Retry-After. The hook
 *   runs after the rate limiter's (the answer is metered and carries RateLimit-* like every
 *   answer) and sends its answer itself, not through the error handler: no log line per refusal,
 *   as for the load shedding's 503 (plugins/under-pressure.ts).
 */
export default fp(
  async (app) => {
    const { connections, trustProxy } = app.config;
    applyTimeouts(app.server, connections);
    const max = connections.maxPerAddress;
    if (max === 0) return;
    const trusted = trustedPeer(trustProxy);
    capConnectionsPerAddress(app.server, {
      max,
      trusted,
      onRefused: () => app.metrics.recordRefusal('connections_per_address'),
    });
    if (trustProxy === false) return;

    const inFlight = new InFlightPerAddress(max);
    const cap: onRequestHookHandler = (request, reply, done) => {
      if (!trusted(request.socket.remoteAddress ?? '')) return done();
      const key = inFlight.enter(request.ip);
      if (key === undefined) {
        sendProblem(
          request,
          reply,
          new ApiError(
            'rate_limit_exceeded',
            `This client address has ${max} requests in flight, the most it may; retry in ${RETRY_AFTER_S} s.`,
            { headers: { 'retry-after': String(RETRY_AFTER_S) } },
          ),
        );
        return;
      }
      // 'close' comes once the answer is sent or the connection is gone, whichever is first.
      reply.raw.once('close', () => inFlight.leave(key));
      done();
    };
    app.addHook('onRequest', cap);
  },
  {
    name: 'pda-connection-limits',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-metrics', 'pda-problems', 'pda-rate-limit'],
  },
);
