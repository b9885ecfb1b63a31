/**
 * The api's request spans (docs/operations.md, "Traces"): @fastify/otel, registered before every
 * plugin and route when traces are on (@pda/tracing settings), one span per request — no span per
 * hook or handler, which would multiply the cost for no stage worth seeing — named by its route,
 * with the company once the key is accepted. What a read adds (plan, rows, links to the batches
 * that applied its changes) is in request-trace.ts.
 *
 * A caller's `traceparent` is never continued: no propagator is registered, so a partner cannot
 * make us sample, nor attach our spans to its trace.
 */
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Tracing } from '@pda/tracing';
import type { FastifyInstance } from 'fastify';
import { recordingSpan } from './request-trace.ts';

export async function registerTracing(app: FastifyInstance, tracing: Tracing): Promise<void> {
  if (!tracing.enabled || tracing.provider === undefined) return;
  const instrumentation = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, request) => {
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unknown route'}`);
    },
  });
  instrumentation.setTracerProvider(tracing.provider);
  await app.register(instrumentation.plugin());
  // After auth's preValidation: the company the request reads (no key, cursor or token: those stay
  // out of every span, @pda/tracing safe-attributes.ts).
  app.addHook('preHandler', async (request) => {
    const company = request.tenant?.company.id;
    if (company !== undefined) recordingSpan(request)?.setAttribute('pda.company', company);
  });
}
