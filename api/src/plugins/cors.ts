import fp from 'fastify-plugin';
import { PREFLIGHT_HEADERS } from '../http/cors.ts';

/**
 * Browser preflights (api/README.md, "CORS"): `OPTIONS` on a path of the contract answers 204 with
 * the allowed methods and request headers, before the key is resolved or the budget spent — a
 * preflight carries no credential, and a browser sends one before each uncached cross-origin
 * call, so metering it would halve a partner's budget. `OPTIONS` on any other path is the usual
 * 404 problem (metered). Not a route: the contract has no OPTIONS operations (the route inventory
 * compares routes with operations), and Fastify would not run a route's hooks any earlier.
 * Registered before the rate limiter (plugins/rate-limit.ts depends on pda-cors).
 */
export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'OPTIONS' || !app.contract.hasPath(request.url)) return;
      return reply.code(204).headers(PREFLIGHT_HEADERS).send();
    });
  },
  { name: 'pda-cors', fastify: '5.x', dependencies: ['pda-contract', 'pda-problems'] },
);
