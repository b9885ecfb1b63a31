import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { RESOURCE_LIST } from '../resources/resource.ts';
import { tenantRoute } from '../routing/contract-route.ts';

/**
 * GET /v1/<resource> and GET /v1/<resource>/{id} for every exported resource of the table
 * registry (schemas, credential and scope from the contract's operations).
 */
export default async function resourceRoutes(app: FastifyInstance): Promise<void> {
  for (const resource of RESOURCE_LIST) {
    app.route(tenantRoute(app, resource.operations.list, listHandler(app, resource)));
    app.route(tenantRoute(app, resource.operations.get, itemHandler(app, resource, resource.itemParam)));
  }
}
