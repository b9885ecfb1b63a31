import fp from 'fastify-plugin';
import { PROBLEM_CONTENT_TYPE } from '../errors/problem.ts';
import { markPrivate } from '../http/private-headers.ts';

/**
 * Keeps tenants' answers out of shared caches (api/README.md, "Response headers"): an answer to an
 * operation that takes a key, whatever its status, and every problem document get
 * `Cache-Control: private, no-store` (unless the answer set its own) and `Vary: Authorization,
 * X-Service-Company` appended to what Vary already names. On send, so every way an answer leaves
 * is covered — handlers, the error and not-found handlers, the load shedding's 503, 304s (which
 * set them already: sync/conditional.ts). Health and version successes stay cacheable; the raw
 * answers to requests Node's parser refused carry the headers from connections/client-error.ts.
 */
export default fp(
  async (app) => {
    app.addHook('onSend', async (request, reply, payload) => {
      const operation = request.routeOptions.config.operation;
      const type = reply.getHeader('content-type');
      if ((operation && !operation.anonymous) || String(type ?? '').startsWith(PROBLEM_CONTENT_TYPE)) {
        markPrivate(reply);
      }
      return payload;
    });
  },
  { name: 'pda-private-responses', fastify: '5.x', dependencies: ['pda-problems'] },
);
