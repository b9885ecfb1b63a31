import type { FastifyInstance } from 'fastify';
import { tenantRoute } from '../routing/contract-route.ts';

/** GET /v1/me: the calling key (never the key itself, only its identifier) and its company. */
export default async function meRoutes(app: FastifyInstance): Promise<void> {
  app.route(
    tenantRoute(app, 'getMe', async (_request, _reply, { key, company }) => {
      return {
        data: {
          api_key: {
            id: key.id,
            name: key.name,
            identifier: `${key.prefix}…${key.lastFour}`,
            scopes: key.scopes,
            expires_at: key.expiresAt,
            revokes_at: key.revokesAt,
          },
          company: { id: company.id, name: company.name, currency: company.currency },
        },
      };
    }),
  );
}
