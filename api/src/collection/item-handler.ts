import { readById } from '@pda/projections/read';
import type { FastifyInstance } from 'fastify';
import type { ItemOperationId } from '../contract/operation-types.ts';
import { notFound } from '../errors/api-error.ts';
import { JSON_UTF8, selectedDocuments } from '../resources/members.ts';
import type { Resource } from '../resources/resource.ts';
import type { TenantHandler } from '../routing/contract-route.ts';
import { parseItemQuery } from './collection-query.ts';
import { requireIncludeScopes } from './include-scopes.ts';

/**
 * An item endpoint: `{ data }` from the tenant's own company file only, so a record of another
 * company is simply not there — 404 exactly like a missing one (docs/public-data-api-v1.md,
 * "Collection rules" 6).
 */
export function itemHandler(
  app: FastifyInstance,
  resource: Resource,
  idParameter: string,
): TenantHandler<ItemOperationId> {
  // The route's one path parameter (`/v1/sites/{siteId}`): required by the contract, so always there.
  if (!app.contract.operation(resource.operations.get).url.endsWith(`/:${idParameter}`)) {
    throw new Error(`${resource.operations.get}: the contract's path has no {${idParameter}}`);
  }
  return async (request, reply, tenant) => {
    const { include, fields } = parseItemQuery(request.query, resource);
    requireIncludeScopes(tenant, resource, include);
    const params: Readonly<Record<string, string>> = request.params;
    const id = params[idParameter]!;
    const handle = app.projections.company(tenant.company.id);
    const document = handle.snapshot(() => {
      const row = readById(handle, resource.table, id, resource.itemColumns);
      return row && resource.documents(handle, [row], include)[0];
    });
    if (document === undefined) throw notFound();
    reply.type(JSON_UTF8);
    return `{"data":${selectedDocuments([document], fields, include)[0]}}`;
  };
}
