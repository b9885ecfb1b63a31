import fp from 'fastify-plugin';
import { ApiError } from '../errors/api-error.ts';
import { PREFLIGHT_HEADERS } from '../http/cors.ts';

/**
 * Browser preflights (api/README.md, "CORS"): `OPTIONS` on a path of the contract answers 204 with
 * the allowed methods and request headers, before the key is resolved — a preflight carries no
 * credential (a browser sends one on its own before each uncached cross-origin call).
 *
 * Only a real CORS preflight (Fetch standard: `Origin` and `Access-Control-Request-Method`) is
 * answered so; any other `OPTIONS` is 400 `bad_request`, like @fastify/cors's strictPreflight, and
 * not an anonymous 204 anyone may ask for. Both are metered per client address, the budget of
 * every request without a key: this plugin depends on pda-rate-limit, so the limiter's onRequest
 * hook has run (RateLimit-* on the 204, 429 once the address's budget is spent). A partner's key
 * budget is not touched. `OPTIONS` on any other path is the usual 404 problem. Not a route: the
 * contract has no OPTIONS operations (the route inventory compares routes with operations), and
 * Fastify would not run a route's hooks any earlier.
 */
export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'OPTIONS' || !app.contract.hasPath(request.url)) return;
      const { origin } = request.headers;
      if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
        throw new ApiError(
          'bad_request',
          'OPTIONS is answered only as a CORS preflight, with Origin and Access-Control-Request-Method; use GET.',
        );
      }
      return reply.code(204).headers(PREFLIGHT_HEADERS).send();
    });
  },
  { name: 'pda-cors', fastify: '5.x', dependencies: ['pda-contract', 'pda-problems', 'pda-rate-limit'] },
);
