import { classifyFault } from '@pda/projections/model';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, invalidParameter } from '../errors/api-error.ts';
import { sendProblem, setStandardHeaders } from '../errors/send-problem.ts';
import { toApiError } from '../errors/to-api-error.ts';
import { ALLOWED_METHODS } from '../http/cors.ts';
import { isParsedQuery, MALFORMED_PARAMETERS } from '../http/query-string.ts';
import { checkIntegerSyntax } from '../routing/integer-syntax.ts';
import { checkSingleValues } from '../routing/single-values.ts';

/**
 * Every answer that is not a success is a problem document (api/README.md, "Errors"): the error handler, the
 * not-found handler (404 for unknown paths, 405 + Allow for a wrong method on a known path) and
 * the checks of a query string before validation: valid percent-encoded UTF-8, each parameter
 * given once, integers in decimal digits.
 */
export default fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      setStandardHeaders(request, reply);
    });

    app.addHook('preValidation', async (request) => {
      const query = isParsedQuery(request.query) ? request.query : undefined;
      const malformed = query?.[MALFORMED_PARAMETERS];
      if (malformed && malformed.length > 0) {
        throw invalidParameter(malformed[0]!, 'is not valid percent-encoded UTF-8');
      }
      const operation = request.routeOptions.config.operation;
      if (query && operation) {
        checkSingleValues(query, operation);
        checkIntegerSyntax(query, operation);
      }
    });

    app.setErrorHandler((error, request, reply) => {
      const { apiError, log } = toApiError(error);
      // A company file that failed under a query (corrupt, I/O): reopen it on the next request.
      if (classifyFault(error) !== undefined && request.tenant && app.hasDecorator('projections')) {
        app.projections.forget(request.tenant.company.id);
      }
      if (log === 'error') request.log.error({ err: error }, 'request failed');
      else if (log === 'warn') request.log.warn({ err: error }, `request refused: ${apiError.code}`);
      return sendProblem(request, reply, apiError);
    });

    // Fastify reads the body of a request with a body method before the not-found handler runs, and
    // refuses QUERY without Content-Type with its own 400 there: answer requests that match no route
    // before that (preParsing runs after every onRequest hook, so the RateLimit-* headers are set).
    app.addHook('preParsing', async (request) => {
      if (request.is404) throw unroutable(app, request);
    });

    app.setNotFoundHandler((request, reply) => sendProblem(request, reply, unroutable(app, request)));
  },
  { name: 'pda-problems', fastify: '5.x', dependencies: ['pda-contract'] },
);

/** 405 + Allow for a wrong method on a known path (OPTIONS is answered by plugins/cors.ts), 404 otherwise. */
function unroutable(app: FastifyInstance, request: FastifyRequest): ApiError {
  if (app.contract.hasPath(request.url) && request.method !== 'GET' && request.method !== 'HEAD') {
    return new ApiError(
      'method_not_allowed',
      `${request.method} is not allowed here; allowed: ${ALLOWED_METHODS}.`,
      { headers: { allow: ALLOWED_METHODS } },
    );
  }
  return new ApiError('not_found', 'No such path.');
}
