import { type KeysetPosition, readSyncState } from '@pda/projections/read';
import type { FastifyInstance } from 'fastify';
import type { ListOperationId } from '../contract/operation-types.ts';
import { pageResponse } from '../http/page-bytes.ts';
import { noteListPage, recordingSpan } from '../observability/request-trace.ts';
import { type ListPageInput, readListPage } from '../read-pool/list-page-read.ts';
import { isoMicros } from '../resources/iso-micros.ts';
import { JSON_UTF8 } from '../resources/members.ts';
import type { Resource } from '../resources/resource.ts';
import type { TenantHandler } from '../routing/contract-route.ts';
import { ifNoneMatch, notModified, pageEtag, privatePage } from '../sync/conditional.ts';
import { requireTokenCovered, signSyncToken, verifySyncToken, walkStart } from '../sync/sync-token.ts';
import { parseCollectionQuery } from './collection-query.ts';
import { type CursorBinding, cursorSecrets, signCursor, verifyCursor } from './cursor.ts';
import { requireIncludeScopes } from './include-scopes.ts';
import { pageUrl } from './links.ts';
import { pageLinks } from './page-links.ts';

/**
 * A collection endpoint: one keyset page of the tenant's company file, `{ data, meta, links }`.
 * links.next continues after the last row, links.prev goes back before the first; both carry the
 * sort, filters, include, fields and limit of this request plus a signed cursor. The last page of
 * a walk also carries the sync token of the next run (`meta.sync`, `links.sync`), and the first
 * page of a since- or token-walk an ETag (api/src/sync/).
 */
export function listHandler(app: FastifyInstance, resource: Resource): TenantHandler<ListOperationId> {
  const path = app.contract.operation(resource.operations.list).path;
  return async (request, reply, tenant) => {
    const query = parseCollectionQuery(request.query, resource, app.config.updatedSinceOverlapMs);
    requireIncludeScopes(tenant, resource, query.include);
    const secrets = cursorSecrets(app.config);
    const syncBinding = { c: tenant.company.id, r: resource.name, f: '' };
    const token =
      query.syncToken === undefined
        ? undefined
        : verifySyncToken(secrets, query.syncToken, syncBinding).start;
    const binding: CursorBinding = {
      c: tenant.company.id,
      r: resource.name,
      s: query.sort.canonical,
      f: token ? `sync=${token.watermarkUs}` : query.filters,
    };
    const secret = app.config.cursorSecret;
    const at = query.cursor
      ? verifyCursor(secrets, query.cursor, binding, query.sort.keys.length)
      : undefined;
    const changedSinceUs = token ? token.watermarkUs + 1 : query.changedSinceUs;

    // A first page that a partner polls: answered 304 from the file's meta row alone when unchanged.
    const conditional = at === undefined && changedSinceUs !== undefined;
    let etag: string | undefined;
    if (conditional) {
      const state = readSyncState(app.projections.company(tenant.company.id));
      if (token) requireTokenCovered(token, state);
      etag = pageEtag(request, tenant.company.id, state);
      if (ifNoneMatch(request.headers['if-none-match'], etag)) return notModified(app, request, reply, etag);
    }
    const input: ListPageInput = {
      companyId: tenant.company.id,
      resource: resource.name,
      request: {
        sort: query.sort.keys,
        limit: query.limit,
        direction: at?.direction ?? 'after',
        position: at?.position,
        changedSinceUs,
      },
      include: [...query.include],
      fields: query.fields && [...query.fields],
    };
    // On a reader thread when there are some (read-pool/), else here on the loop: the same read.
    const read = app.readPool
      ? await app.readPool.read(tenant.key.id, 'list', input)
      : readListPage(app.projections, input);
    noteListPage(recordingSpan(request), {
      plan: read.plan,
      count: 'items' in read ? read.items.length : read.count,
    });
    const { state } = read;
    if (token) requireTokenCovered(token, state);
    // Where this walk started: read by its first page, carried by its cursors to its last.
    const walk = at ? at.walk : walkStart(state);

    const link = (cursor: string | undefined, sync?: string) =>
      pageUrl(app.config.publicBaseUrl, path, [
        [`fields[${resource.name}]`, query.raw.fields],
        ['filter[updated_since]', sync === undefined ? query.raw.updatedSince : undefined],
        ['include', query.raw.include],
        ['sort', query.raw.sort],
        ['limit', String(query.limit)],
        ['sync', sync ?? query.syncToken],
        ['cursor', cursor],
      ]);
    const { next, prev } = pageLinks({
      at,
      // pageLinks reads only the first and the last row's position.
      rows: read.first && read.last ? [read.first, read.last] : [],
      hasMore: read.hasMore,
      reached: read.reached,
      positionOf: (position: KeysetPosition) => position,
      link: (position) => link(position && signCursor(secret, binding, { ...position, walk })),
    });
    const sync = next === null && walk !== undefined ? signSyncToken(secret, syncBinding, walk) : undefined;
    const meta = {
      page: { limit: query.limit, has_more: next !== null },
      ...(sync && { sync: { token: sync, as_of: isoMicros(walk!.watermarkUs) } }),
    };
    const links = { self: link(query.cursor), next, prev, ...(sync && { sync: link(undefined, sync) }) };
    if (etag !== undefined) privatePage(reply, pageEtag(request, tenant.company.id, state));
    // The stored documents are the response's bytes: written into the envelope, not re-serialised.
    reply.type(JSON_UTF8);
    const head = '{"data":[';
    const tail = `],"meta":${JSON.stringify(meta)},"links":${JSON.stringify(links)}}`;
    return pageResponse(head, read, tail);
  };
}
