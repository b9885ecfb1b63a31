import type { onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { type ApiMetrics, createMetrics } from '../ops/metrics.ts';
import { projectionsHealth } from '../projections/projections-health.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's Prometheus metrics; server.ts serves them on the admin port, never here. */
    metrics: ApiMetrics;
  }
}

/**
 * Request metrics (api/README.md, "Metrics"), recorded in one onResponse hook: the operation is
 * the route's contract operation (http/contract-route.ts puts it in the route config), so the
 * label is looked up, never derived from the URL. The hook runs after the answer is sent and
 * swallows its own failures: a request never fails because of metrics. Refusals are recorded
 * here for 429s and by plugins/under-pressure.ts for shed requests.
 */
export default fp(
  async (app) => {
    const metrics = createMetrics({
      openCompanyFiles: () => app.projections.openCompanyCount,
      stalenessSeconds: () => projectionsHealth(app.projections, app.clock(), undefined).stalenessSeconds,
    });
    app.decorate('metrics', metrics);

    let failureLogged = false;
    const record: onResponseHookHandler = (request, reply, done) => {
      try {
        const status = reply.statusCode;
        app.metrics.recordRequest(
          request.routeOptions.config.operation?.operationId,
          status,
          reply.elapsedTime / 1000,
        );
        if (status === 429) app.metrics.recordRefusal('rate_limit_exceeded');
      } catch (error) {
        if (!failureLogged) request.log.warn({ err: error }, 'metrics: recording a request failed');
        failureLogged = true;
      }
      done();
    };
    app.addHook('onResponse', record);
  },
  { name: 'pda-metrics', fastify: '5.x', dependencies: ['pda-config', 'pda-projections'] },
);
