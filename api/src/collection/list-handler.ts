import { type KeysetPosition, readPage, type SortKey } from '@pda/projections';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { Resource } from '../resources/resource.ts';
import { parseCollectionQuery } from './collection-query.ts';
import { type CursorBinding, cursorSecrets, signCursor, verifyCursor } from './cursor.ts';
import { requireIncludeScopes } from './include-scopes.ts';
import { pageUrl } from './links.ts';
import { JSON_UTF8, selectedMembers } from './members.ts';
import { pageLinks } from './page-links.ts';

/**
 * A collection endpoint: one keyset page of the tenant's company file, `{ data, meta, links }`.
 * links.next continues after the last row, links.prev goes back before the first; both carry the
 * sort, filters, include, fields and limit of this request plus a signed cursor.
 */
export function listHandler(app: FastifyInstance, resource: Resource): RouteHandlerMethod {
  return async (request, reply) => {
    const tenant = request.tenant!;
    const path = request.routeOptions.config.operation!.path;
    const query = parseCollectionQuery(
      request.query as Record<string, unknown>,
      resource,
      app.config.updatedSinceOverlapMs,
    );
    requireIncludeScopes(tenant, resource, query.include);
    const binding: CursorBinding = {
      c: tenant.company.id,
      r: resource.name,
      s: query.sort.canonical,
      f: query.filters,
    };
    const secret = app.config.cursorSecret;
    const at = query.cursor
      ? verifyCursor(cursorSecrets(app.config), query.cursor, binding, query.sort.keys.length)
      : undefined;

    const handle = app.projections.company(tenant.company.id);
    const { page, documents } = handle.snapshot(() => {
      const page = readPage(
        handle,
        resource.table,
        {
          sort: query.sort.keys,
          limit: query.limit,
          direction: at?.direction ?? 'after',
          position: at?.position,
          changedSinceUs: query.changedSinceUs,
        },
        resource.pageColumns(query.sort.keys),
      );
      return { page, documents: resource.documents(handle, page.rows, query.include) };
    });

    const link = (cursor: string | undefined) =>
      pageUrl(app.config.publicBaseUrl, path, [
        [`fields[${resource.name}]`, query.raw.fields],
        ['filter[updated_since]', query.raw.updatedSince],
        ['include', query.raw.include],
        ['sort', query.raw.sort],
        ['limit', String(query.limit)],
        ['cursor', cursor],
      ]);
    const { next, prev } = pageLinks({
      at,
      rows: page.rows,
      hasMore: page.hasMore,
      positionOf: (row: object) => keysetPosition(row, query.sort.keys),
      link: (position) => link(position && signCursor(secret, binding, position)),
    });
    const meta = { page: { limit: query.limit, has_more: next !== null } };
    const links = { self: link(query.cursor), next, prev };
    // The stored documents are the response's bytes: joined into the envelope, not re-serialised.
    reply.type(JSON_UTF8);
    return `{"data":[${selectedMembers(documents, query.fields, query.include)}],"meta":${JSON.stringify(meta)},"links":${JSON.stringify(links)}}`;
  };
}

function keysetPosition(row: object, keys: readonly SortKey[]): KeysetPosition {
  const values = row as Record<string, unknown>;
  return keys.map((key) => String(values[key.column]));
}
