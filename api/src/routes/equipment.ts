import type { FastifyInstance } from 'fastify';
import { itemHandler } from '../collection/item-handler.ts';
import { listHandler } from '../collection/list-handler.ts';
import { contractRoute } from '../http/contract-route.ts';
import { equipment } from '../resources/equipment.ts';

/** GET /v1/equipment and GET /v1/equipment/{equipmentId} (schemas, credential and scope from the contract). */
export default async function equipmentRoutes(app: FastifyInstance): Promise<void> {
  app.route(contractRoute(app, 'listEquipment', listHandler(app, equipment)));
  app.route(contractRoute(app, 'getEquipment', itemHandler(app, equipment, 'equipmentId')));
}
