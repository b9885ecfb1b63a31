import { monitorEventLoopDelay } from 'node:perf_hooks';
import underPressure, { type FastifyUnderPressureOptions } from '@fastify/under-pressure';
import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { loopDelayJudge, loopDelayMonitor } from '../rate-limit/loop-delay.ts';
import { overloadAnswer, sheddingLog } from '../rate-limit/overload-answer.ts';

/**
 * Sheds load before it turns into timeouts (api/README.md, "Rate limiting and overload"): when the
 * event loop has lagged beyond API_MAX_EVENT_LOOP_DELAY_MS for API_UNDER_PRESSURE_SUSTAINED_SAMPLES
 * samples in a row, or the heap grows beyond API_MAX_HEAP_USED_BYTES (0 turns a check off),
 * requests are answered 503 `service_unavailable` with Retry-After.
 *
 * The heap is judged by @fastify/under-pressure; the event loop by rate-limit/loop-delay.ts, not by
 * the library's one-sample check, whose reading of a start-up's busy loop as an infinite delay shed
 * a new writer's first second of requests (docs/resilience.md, writers split). Its histogram is
 * enabled once the app is ready (routes compiled), so the start-up is never judged.
 *
 * Both checks are global onRequest hooks registered after the rate limiter's (dependency on
 * pda-rate-limit), so a shed request has been metered and carries the RateLimit-* headers like any
 * other answer. The answer is built here and sent directly rather than thrown: thrown, it would go
 * through the error handler, which logs every 5xx — one log line per shed request is exactly the
 * extra work an overloaded process cannot afford. Shedding is logged once per second with a count
 * and counted in pda_api_rate_limited_total{reason="under_pressure"} (plugins/metrics.ts).
 */
type PressureHandler = (
  ...args: Parameters<NonNullable<FastifyUnderPressureOptions['pressureHandler']>>
) => unknown;

/** The histogram's timer period, ms (under-pressure's too). */
const RESOLUTION_MS = 10;

export default fp(
  async (app) => {
    const { maxEventLoopDelayMs, maxHeapUsedBytes, retryAfterSeconds, sampleIntervalMs, sustainedSamples } =
      app.config.underPressure;
    if (maxEventLoopDelayMs === 0 && maxHeapUsedBytes === 0) return;
    const log = sheddingLog(app.log);
    const shed = (type: string, value: number) => {
      log.shed(type, value);
      app.metrics.recordRefusal('under_pressure');
    };
    await app.register(underPressure, {
      maxEventLoopDelay: 0,
      maxHeapUsedBytes,
      sampleInterval: sampleIntervalMs,
      retryAfter: retryAfterSeconds,
      // README: "Any other return value than a promise or nullish will be sent to the client with
      // reply.send" and ends the request there (the typings only admit void).
      pressureHandler: ((request, reply, type, value) => {
        shed(type, value ?? 0);
        return overloadAnswer(request, reply, retryAfterSeconds);
      }) as PressureHandler as NonNullable<FastifyUnderPressureOptions['pressureHandler']>,
    });
    if (maxEventLoopDelayMs === 0) return;

    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    const judge = loopDelayJudge({ maxDelayMs: maxEventLoopDelayMs, sustainedSamples });
    const monitor = loopDelayMonitor({
      histogram,
      judge,
      resolutionMs: RESOLUTION_MS,
      now: () => performance.now(),
    });
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      histogram.enable();
      monitor.start();
      timer = setInterval(() => monitor.sample(), sampleIntervalMs);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      histogram.disable();
    });
    const check: onRequestHookHandler = (request, reply, done) => {
      if (!judge.overloaded) return done();
      shed('eventLoopDelay', Math.round(judge.delayMs));
      reply.send(overloadAnswer(request, reply, retryAfterSeconds));
    };
    app.addHook('onRequest', check);
  },
  {
    name: 'pda-under-pressure',
    fastify: '5.x',
    dependencies: ['pda-config', 'pda-rate-limit', 'pda-metrics'],
  },
);
