import type { FastifyInstance } from 'fastify';
import { contractRoute } from '../http/contract-route.ts';

/**
 * GET /v1/reference/scopes: the complete scope vocabulary (docs/public-data-api-v1.md, "Scope
 * entry"). Unpaginated.
 * `domain` groups scopes for display: sites on their own, the priced catalogue together.
 * The key CLI (@pda/ops/scopes) holds the same list; a test keeps the two equal without making
 * the api deployable depend on the ops tooling.
 */
export const SCOPES = [
  { scope: 'sites:read', resource: 'sites', ability: 'read', domain: 'sites' },
  { scope: 'services:read', resource: 'services', ability: 'read', domain: 'catalogue' },
  { scope: 'equipment:read', resource: 'equipment', ability: 'read', domain: 'catalogue' },
  {
    scope: 'equipment-categories:read',
    resource: 'equipment-categories',
    ability: 'read',
    domain: 'catalogue',
  },
  { scope: 'consumables:read', resource: 'consumables', ability: 'read', domain: 'catalogue' },
] as const;

export default async function scopesRoutes(app: FastifyInstance): Promise<void> {
  const body = { data: SCOPES, meta: { count: SCOPES.length } };
  app.route(contractRoute(app, 'listScopes', async () => body));
}
