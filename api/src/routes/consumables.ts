import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { contractRoute } from '../http/contract-route.ts';
import { consumables } from '../resources/consumables.ts';

/** GET /v1/consumables and GET /v1/consumables/{consumableId} (schemas, credential and scope from the contract). */
export default async function consumablesRoutes(app: FastifyInstance): Promise<void> {
  app.route(contractRoute(app, 'listConsumables', listHandler(app, consumables)));
  app.route(contractRoute(app, 'getConsumable', itemHandler(app, consumables, 'consumableId')));
}
