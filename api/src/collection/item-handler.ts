import { readById } from '@pda/projections';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { notFound } from '../http/api-error.ts';
import type { Resource } from '../resources/resource.ts';
import { parseItemQuery } from './collection-query.ts';
import { requireIncludeScopes } from './include-scopes.ts';
import { JSON_UTF8, selectedMembers } from './members.ts';

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
  return async (request, reply) => {
    const tenant = request.tenant!;
    const { include, fields } = parseItemQuery(request.query as Record<string, unknown>, resource);
    requireIncludeScopes(tenant, resource, include);
    const id = (request.params as Record<string, string>)[idParameter]!;
    const handle = app.projections.company(tenant.company.id);
    const document = handle.snapshot(() => {
      const row = readById(handle, resource.table, id, resource.itemColumns);
      return row && resource.documents(handle, [row], include)[0];
    });
    if (document === undefined) throw notFound();
    reply.type(JSON_UTF8);
    return `{"data":${selectedMembers([document], fields, include)}}`;
  };
}
