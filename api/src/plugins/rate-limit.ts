import rateLimit from '@fastify/rate-limit';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { AppOptions } from '../app-options.ts';
import { ApiError } from '../http/api-error.ts';

/**
 * One request budget per API key (per client IP for health, version and requests without a
 * usable key), shared by every route and, with API_REDIS_URL, by every api process (atomic
 * INCR+PEXPIRE in Redis). Draft-spec headers (RateLimit-Limit/-Remaining/-Reset, Retry-After on
 * 429) on every response: the limiter runs as a global onRequest hook right after the credential
 * is resolved, so 401s, 404s and 405s are metered and carry the headers too.
 * If Redis fails, requests are let through (fail-open): availability of a read API over strictness.
 */
export default fp(
  async (app, options: AppOptions) => {
    const { rateLimit: limits } = options.config;
    const redis = limits.redisUrl
      ? new Redis(limits.redisUrl, {
          connectTimeout: 1_000,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
        })
      : undefined;
    if (redis) {
      redis.on('error', (error) => app.log.warn({ err: error }, 'rate limit store (redis) error'));
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
    }
    await app.register(rateLimit, {
      global: false,
      max: limits.max,
      timeWindow: limits.windowMs,
      enableDraftSpec: true,
      skipOnError: true,
      nameSpace: 'pda-api-rate-limit:',
      ...(redis ? { redis } : {}),
      keyGenerator: (request) => {
        const credential = request.credential;
        return credential?.kind === 'key' ? `key:${credential.key.id}` : `ip:${request.ip}`;
      },
      errorResponseBuilder: (_request, context) =>
        new ApiError('rate_limit_exceeded', `Rate limit exceeded; retry in ${context.after}.`),
    });
    app.addHook('onRequest', app.rateLimit());
  },
  { name: 'pda-rate-limit', fastify: '5.x', dependencies: ['pda-config', 'pda-auth'] },
);
