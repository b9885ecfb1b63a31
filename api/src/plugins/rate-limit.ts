import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimitExceeded } from '../errors/api-error.ts';
import { type AddressMeter, addressMeter } from '../rate-limit/address-meter.ts';
import { localStore } from '../rate-limit/local-store.ts';
import { addressKey, rateLimitKey } from '../rate-limit/rate-limit-key.ts';
import { connectRateLimitRedis } from '../rate-limit/redis-client.ts';
import { sharedStore } from '../rate-limit/shared-store.ts';

/**
 * Rate limiting (docs/public-data-api-v1.md "Limits"; api/README.md, "Rate limiting and overload";
 * docs/decisions/0005-rate-limit-store.md): ONE budget per API key (per client IP without a known
 * key), `API_RATE_LIMIT_MAX` requests per `API_RATE_LIMIT_WINDOW_MS`,
 * with RateLimit-Limit/-Remaining/-Reset (IETF draft names) on every response and a 429
 * `rate_limit_exceeded` problem with Retry-After.
 *
 * The library's per-route hooks are switched off (`global: false`: they would not run for unknown
 * paths or 405s, which never reach a route) and its handler is added once as a GLOBAL onRequest
 * hook instead. Depending on pda-auth puts it after auth's onRequest hook, so the key is already
 * resolved when the budget is chosen, and before every refusal of the request (401, 403, 400 and
 * the not-found handler's 404/405 all happen later), so those carry the headers too. pda-cors
 * depends on this plugin: preflights are metered per client address (plugins/cors.ts).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** Spends a client address's budget for an answer given without a request (connections/client-error.ts). */
    meterClientAddress: AddressMeter;
    /**
     * Gives back the request's use of its budget and raises its RateLimit-Remaining to match: a
     * 304 to a conditional request costs nothing (api/src/sync/conditional.ts), at most
     * API_NOT_MODIFIED_FREE_PER_WINDOW times per key and window; later 304s stay counted.
     */
    refundRateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

/** Keys (API keys + client addresses) whose windows are kept in memory; the oldest is evicted. */
const MAX_TRACKED_KEYS = 100_000;
const REDIS_NAMESPACE = 'pda:rate-limit:';

export default fp(
  async (app) => {
    const { max, windowMs, redisUrl, notModifiedFree } = app.config.rateLimit;
    let store: ReturnType<typeof sharedStore> | ReturnType<typeof localStore> = localStore(MAX_TRACKED_KEYS);
    if (redisUrl !== undefined) {
      const redis = await connectRateLimitRedis(redisUrl, app.log);
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
      store = sharedStore({
        redis,
        namespace: REDIS_NAMESPACE,
        fallbackKeys: MAX_TRACKED_KEYS,
        log: app.log,
      });
    }

    await app.register(rateLimit, {
      global: false,
      max,
      timeWindow: windowMs,
      enableDraftSpec: true,
      keyGenerator: rateLimitKey,
      // A hop from another api node with the shared secret was metered where the partner's request
      // arrived (plugins/forward.ts): counted once, not again here (no RateLimit-* headers from
      // here either: the forwarding node's travel with the answer).
      allowList: (request) => request.hop?.trusted === true,
      errorResponseBuilder: (_request, context) => rateLimitExceeded(context.ttl),
      store,
    });
    app.addHook('onRequest', app.rateLimit() as unknown as onRequestAsyncHookHandler);
    // The store classes keep their state in a closure: this instance shares the plugin's budgets.
    const budgets = new store();
    app.decorate('meterClientAddress', addressMeter(budgets, addressKey, max, windowMs));
    app.decorate('refundRateLimit', (request: FastifyRequest, reply: FastifyReply) => {
      // Not counted here (above): the forwarding node gives it back when the 304 reaches it.
      if (request.hop?.trusted === true) return Promise.resolve();
      return new Promise<void>((resolve) => {
        budgets.refund(
          rateLimitKey(request),
          notModifiedFree,
          (_error, result) => {
            // Not refunded: the limiter's headers already say what this request cost.
            if (result?.refunded === true && result.ttl > 0) {
              reply.header('ratelimit-remaining', String(Math.max(0, max - result.current)));
            }
            resolve();
          },
          windowMs,
        );
      });
    });
  },
  {
    name: 'pda-rate-limit',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-auth', 'pda-forward'],
  },
);
