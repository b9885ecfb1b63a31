import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { contractRoute } from '../http/contract-route.ts';
import { sites } from '../resources/sites.ts';

/** GET /v1/sites and GET /v1/sites/{siteId} (schemas, credential and scope from the contract). */
export default async function sitesRoutes(app: FastifyInstance): Promise<void> {
  app.route(contractRoute(app, 'listSites', listHandler(app, sites)));
  app.route(contractRoute(app, 'getSite', itemHandler(app, sites, 'siteId')));
}
