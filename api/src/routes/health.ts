import type { FastifyInstance } from 'fastify';
import { projectionsHealth } from '../company-files/projections-health.ts';
import { contractRoute } from '../routing/contract-route.ts';

/**
 * GET /v1/health: no credential, no tenant data. 200 when every check is ok, 503 otherwise (the
 * body is the health result either way, so probes and people read the same document).
 *
 * Only the dependency answers (docs/public-data-api-v1.md, "Authentication" 8: health discloses
 * nothing beyond them): no figure. The staleness is the operators' (the admin port's
 * pda_api_projection_staleness_seconds): between heartbeats it moves whenever any tenant commits,
 * which an anonymous caller must not watch.
 */
export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.route(
    contractRoute(app, 'getHealth', async (request, reply) => {
      const projections = projectionsHealth(
        app.projections,
        app.clock(),
        app.config.healthMaxStalenessSeconds,
      );
      if (projections.status === 'down') {
        request.log.warn({ err: projections.error }, 'health: projections unreadable');
      }
      const status = projections.status;
      reply.code(status === 'ok' ? 200 : 503);
      return { status, checks: { projections: projections.status } };
    }),
  );
}
