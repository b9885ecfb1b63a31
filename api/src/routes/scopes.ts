import { SCOPES } from '@pda/schemas/registry';
import type { FastifyInstance } from 'fastify';
import { contractRoute } from '../routing/contract-route.ts';

/**
 * GET /v1/reference/scopes: the complete scope vocabulary (docs/public-data-api-v1.md, "Scope
 * entry"). Unpaginated.
 * `domain` groups scopes for display: sites on their own, the priced catalogue together.
 * The list is the table registry's (@pda/schemas/registry), the same the key CLI (@pda/operator-tools/scopes)
 * accepts, without making the api deployable depend on the operator tooling.
 */
export { SCOPES };

export default async function scopesRoutes(app: FastifyInstance): Promise<void> {
  const body = { data: SCOPES, meta: { count: SCOPES.length } };
  app.route(contractRoute(app, 'listScopes', async () => body));
}
