import fp from 'fastify-plugin';
import { authorize, type Tenant } from '../auth/authorize.ts';
import { type Credential, resolveCredential } from '../auth/credential.ts';
import type { ContractOperation } from '../contract/load-contract.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The contract operation a route serves (set by contractRoute). */
    operation?: ContractOperation;
  }
  interface FastifyRequest {
    /** Resolved in onRequest for operations that take a key; null otherwise. */
    credential: Credential | null;
    /** The key and company of an authorised request; null for anonymous operations. */
    tenant: Tenant | null;
  }
}

/**
 * Resolve in onRequest without throwing (rate limiting meters by key and its headers land on 401s
 * too: @fastify/rate-limit's hook runs after global onRequest hooks, so a 401 thrown there would carry
 * no headers; api/README.md, "Rate limiting and overload"); refuse in preValidation, before the
 * query is even validated.
 */
export default fp(
  async (app) => {
    app.decorateRequest('credential', null);
    app.decorateRequest('tenant', null);

    app.addHook('onRequest', async (request) => {
      const operation = request.routeOptions.config.operation;
      if (operation && !operation.anonymous) {
        request.credential = resolveCredential(request.headers.authorization, app.projections);
      }
    });

    app.addHook('preValidation', async (request) => {
      const operation = request.routeOptions.config.operation;
      if (!operation || operation.anonymous) return;
      request.tenant = authorize(
        request.credential ?? { kind: 'none' },
        request.headers['x-service-company'],
        operation.scopes,
        app.projections,
        app.clock(),
      );
    });
  },
  { name: 'pda-auth', fastify: '5.x', dependencies: ['pda-config', 'pda-projections', 'pda-problems'] },
);
