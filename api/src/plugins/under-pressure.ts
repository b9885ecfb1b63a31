import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import type { AppOptions } from '../app-options.ts';

/**
 * Sheds load before it turns into timeouts: when the event loop lags beyond the configured bound,
 * requests get 503 service_unavailable with Retry-After (through the error handler, after the
 * rate limiter so the RateLimit-* headers are still there).
 */
export default fp(
  async (app, options: AppOptions) => {
    const { maxEventLoopDelayMs, retryAfterSeconds } = options.config.underPressure;
    if (maxEventLoopDelayMs === 0) return;
    await app.register(underPressure, {
      maxEventLoopDelay: maxEventLoopDelayMs,
      retryAfter: retryAfterSeconds,
    });
  },
  { name: 'pda-under-pressure', fastify: '5.x', dependencies: ['pda-rate-limit'] },
);
