import type { onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { addCompanyFileCounts } from '../company-files/projection-files.ts';
import { projectionsHealth } from '../company-files/projections-health.ts';
import { type ApiMetrics, createMetrics } from '../observability/metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's Prometheus metrics; server.ts serves them on the admin port, never here. */
    metrics: ApiMetrics;
  }
}

/**
 * Request metrics (api/README.md, "Metrics"), recorded in one onResponse hook: the operation is
 * the route's contract operation (routing/contract-route.ts puts it in the route config), so the
 * label is looked up, never derived from the URL. The hook runs after the answer is sent and
 * recording never throws (a failure is logged once): a request never fails because of metrics.
 * Answers given without the route's hooks record themselves: errors/framework-error.ts (malformed
 * URLs), connections/client-error.ts (no request at all) and plugins/under-pressure.ts (shed requests).
 */
export default fp(
  async (app) => {
    let failureLogged = false;
    const metrics = createMetrics(
      {
        // The loop's handles and the reader threads' (read-pool/) together.
        companyFiles: () => {
          const loop = app.projections.counts();
          const threads = app.readPool?.counts().companyFiles;
          return threads ? addCompanyFileCounts(loop, threads) : loop;
        },
        statements: () => {
          const loop = app.projections.statements();
          const threads = app.readPool?.counts();
          if (!threads) return loop;
          return {
            held: loop.held + threads.statementsHeld,
            evicted: loop.evicted + threads.statementsEvicted,
            maxPerFile: loop.maxPerFile,
          };
        },
        stalenessSeconds: () => projectionsHealth(app.projections, app.clock(), undefined).stalenessSeconds,
      },
      (error) => {
        if (!failureLogged) app.log.warn({ err: error }, 'metrics: recording a request failed');
        failureLogged = true;
      },
    );
    app.decorate('metrics', metrics);

    const record: onResponseHookHandler = (request, reply, done) => {
      metrics.recordRequest(
        request.routeOptions.config.operation?.operationId,
        reply.statusCode,
        reply.elapsedTime / 1000,
        request.refusal,
      );
      done();
    };
    app.addHook('onResponse', record);
  },
  { name: 'pda-metrics', fastify: '5.x', dependencies: ['pda-config', 'pda-projections'] },
);
