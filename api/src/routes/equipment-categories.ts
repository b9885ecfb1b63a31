import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { contractRoute } from '../http/contract-route.ts';
import { equipmentCategories } from '../resources/equipment-categories.ts';

/** GET /v1/equipment-categories and GET /v1/equipment-categories/{categoryId} (schemas, credential and scope from the contract). */
export default async function equipmentCategoriesRoutes(app: FastifyInstance): Promise<void> {
  app.route(contractRoute(app, 'listEquipmentCategories', listHandler(app, equipmentCategories)));
  app.route(contractRoute(app, 'getEquipmentCategory', itemHandler(app, equipmentCategories, 'categoryId')));
}
