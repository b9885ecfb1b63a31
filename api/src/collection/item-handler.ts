import { readById } from '@pda/projections';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { notFound } from '../http/api-error.ts';
import type { Resource } from '../resources/resource.ts';
import { parseItemQuery } from './collection-query.ts';
import { requireIncludeScopes } from './include-scopes.ts';
import { selectMembers } from './members.ts';

/**
 * An item endpoint: `{ data }` from the tenant's own company file only, so a record of another
 * company is simply not there — 404 exactly like a missing one (docs/public-data-api-v1.md,
 * "Collection rules" 6).
 */
export function itemHandler(
  app: FastifyInstance,
  resource: Resource,
  idParameter: string,
): RouteHandlerMethod {
  return async (request) => {
    const tenant = request.tenant!;
    const { include, fields } = parseItemQuery(request.query as Record<string, unknown>, resource);
    requireIncludeScopes(tenant, resource, include);
    const id = (request.params as Record<string, string>)[idParameter]!;
    const handle = app.projections.company(tenant.company.id);
    const json = handle.snapshot(() => {
      const row = readById(handle, resource.table, id);
      return row && resource.present(handle, [row], include)[0];
    });
    if (!json) throw notFound();
    return { data: selectMembers(json, fields, include) };
  };
}
