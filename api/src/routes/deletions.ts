import type { FastifyInstance } from 'fastify';
import { deletionsHandler } from '../collection/deletions-handler.ts';
import { tenantRoute } from '../routing/contract-route.ts';

/** GET /v1/deletions: the records deleted since a time, for incremental export (additive to v1). */
export default async function deletionsRoutes(app: FastifyInstance): Promise<void> {
  app.route(tenantRoute(app, 'listDeletions', deletionsHandler(app)));
}
