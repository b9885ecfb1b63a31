import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { contractRoute } from '../http/contract-route.ts';
import { services } from '../resources/services.ts';

/** GET /v1/services and GET /v1/services/{serviceId} (schemas, credential and scope from the contract). */
export default async function servicesRoutes(app: FastifyInstance): Promise<void> {
  app.route(contractRoute(app, 'listServices', listHandler(app, services)));
  app.route(contractRoute(app, 'getService', itemHandler(app, services, 'serviceId')));
}
