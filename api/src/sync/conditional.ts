import { createHash } from 'node:crypto';
import type { SyncState } from '@pda/projections/read';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addVary, PRIVATE_CACHE_CONTROL, PRIVATE_VARY } from '../http/private-headers.ts';

/**
 * Free "nothing changed" polls (docs/public-data-api-v1.md, "Conditional requests"): the first page
 * of a sync-token call or of a since-walk carries a weak ETag; the same request with
 * `If-None-Match` answers 304 without reading a page and without spending rate-limit budget
 * (GitHub's rule), as long as nothing was committed to the company's file since. Free within a
 * bound: at most API_NOT_MODIFIED_FREE_PER_WINDOW 304s per key and rate-limit window are given
 * back (plugins/rate-limit.ts); later ones cost a request, so polls cannot run without limit.
 *
 * The ETag hashes the key, the company, the file's generation, its highest change time and the
 * request's path and query: any commit moves the change time (so any change of the answer changes
 * the ETag, and some commits that leave this answer as it was change it too: a poll then reads one
 * page more, never one less), and no ETag matches across keys, companies or queries.
 */

export function pageEtag(request: FastifyRequest, companyId: string, state: SyncState): string {
  const keyId = request.tenant?.key.id ?? '';
  const digest = createHash('sha256')
    .update(`${keyId}\n${companyId}\n${state.generation}\n${state.lastChangedUs}\n${request.url}`)
    .digest('base64url')
    .slice(0, 27);
  return `W/"${digest}"`;
}

/**
 * RFC 9110 13.1.2: If-None-Match with the weak comparison, against this page's ETag only. `*`
 * matches nothing here (RFC 9110 would have it match any current page, i.e. every poll): a 304 is
 * for a partner who holds the page, and `*` would be a free answer to one who never read it. Such
 * a request is answered as without the header (docs/public-data-api-v1.md, "Conditional requests").
 */
export function ifNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  const opaque = etag.replace(/^W\//, '');
  for (const candidate of value.split(',')) {
    if (candidate.trim().replace(/^W\//, '') === opaque) return true;
  }
  return false;
}

/**
 * Headers of every response carrying an ETag: each key sees its own company's pages, so no shared
 * cache may keep them, and a private cache must tell keys and companies apart.
 */
export function privatePage(reply: FastifyReply, etag: string): void {
  reply.header('etag', etag);
  reply.header('cache-control', PRIVATE_CACHE_CONTROL);
  addVary(reply, PRIVATE_VARY);
}

/** 304 with the page's ETag and its caching headers; the request's budget is given back (within the bound). */
export async function notModified(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  etag: string,
): Promise<FastifyReply> {
  privatePage(reply, etag);
  await app.refundRateLimit(request, reply);
  return reply.code(304).send();
}
