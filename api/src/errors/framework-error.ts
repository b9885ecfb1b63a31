import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, rateLimitExceeded } from './api-error.ts';
import { sendProblem } from './send-problem.ts';

/**
 * A URL Fastify cannot route (invalid percent-encoding in the path) never reaches a route or its
 * hooks, so this answer meters itself with the shared limiter to carry the RateLimit-* headers too,
 * and counts itself in the request metrics.
 */
export async function answerMalformedUrl(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  let error = new ApiError('bad_request', 'The request URL is malformed.');
  if (app.hasDecorator('createRateLimit')) {
    try {
      const limit = await app.createRateLimit()(request);
      if (!limit.isAllowed) {
        reply.header('ratelimit-limit', limit.max);
        reply.header('ratelimit-remaining', limit.remaining);
        reply.header('ratelimit-reset', limit.ttlInSeconds);
        if (limit.isExceeded) error = rateLimitExceeded(limit.ttl);
      }
    } catch (failure) {
      request.log.warn({ err: failure }, 'rate limit check failed for a malformed URL');
    }
  }
  sendProblem(request, reply, error);
  // No route, so no onResponse hook (plugins/metrics.ts): the answer records itself.
  if (app.hasDecorator('metrics'))
    app.metrics.recordRequest(undefined, reply.statusCode, reply.elapsedTime / 1000);
}
