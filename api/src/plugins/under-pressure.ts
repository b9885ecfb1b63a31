import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import fp from 'fastify-plugin';
import { overloadAnswer, sheddingLog } from '../rate-limit/overload-answer.ts';

/**
 * Sheds load before it turns into timeouts (api/README.md, "Rate limiting and overload"): when the event loop
 * lags beyond API_MAX_EVENT_LOOP_DELAY_MS or the heap grows beyond API_MAX_HEAP_USED_BYTES (0 turns
 * a check off), requests are answered 503 `service_unavailable` with Retry-After.
 *
 * The check is a global onRequest hook registered after the rate limiter's (dependency on
 * pda-rate-limit), so a shed request has been metered and carries the RateLimit-* headers like any
 * other answer. The answer is built here and sent directly rather than thrown: thrown, it would go
 * through the error handler, which logs every 5xx — one log line per shed request is exactly the
 * extra work an overloaded process cannot afford. Shedding is logged once per second with a count
 * and counted in pda_api_rate_limited_total{reason="under_pressure"} (plugins/metrics.ts).
 */
type PressureHandler = (
  ...args: Parameters<NonNullable<FastifyUnderPressureOptions['pressureHandler']>>
) => unknown;

export default fp(
  async (app) => {
    const { maxEventLoopDelayMs, maxHeapUsedBytes, retryAfterSeconds, sampleIntervalMs } =
      app.config.underPressure;
    if (maxEventLoopDelayMs === 0 && maxHeapUsedBytes === 0) return;
    const log = sheddingLog(app.log);
    await app.register(underPressure, {
      maxEventLoopDelay: maxEventLoopDelayMs,
      maxHeapUsedBytes,
      sampleInterval: sampleIntervalMs,
      retryAfter: retryAfterSeconds,
      // README: "Any other return value than a promise or nullish will be sent to the client with
      // reply.send" and ends the request there (the typings only admit void).
      pressureHandler: ((request, reply, type, value) => {
        log.shed(type, value);
        app.metrics.recordRefusal('under_pressure');
        return overloadAnswer(request, reply, retryAfterSeconds);
      }) as PressureHandler as NonNullable<FastifyUnderPressureOptions['pressureHandler']>,
    });
  },
  {
    name: 'pda-under-pressure',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-rate-limit', 'pda-metrics'],
  },
);
