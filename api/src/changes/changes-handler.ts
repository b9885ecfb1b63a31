import type { SyncState } from '@pda/projections/read';
import type { FastifyInstance } from 'fastify';
import { cursorSecrets } from '../collection/cursor.ts';
import { pageUrl } from '../collection/links.ts';
import { invalidParameter } from '../errors/api-error.ts';
import { pageResponse } from '../http/page-bytes.ts';
import { noteFeedRead, recordingSpan } from '../observability/request-trace.ts';
import {
  type ChangesPageInput,
  type ChangesPageRead,
  readChangesPage,
} from '../read-pool/changes-page-read.ts';
import type { ChangesPageBytes } from '../read-pool/reader-protocol.ts';
import { JSON_UTF8 } from '../resources/members.ts';
import type { TenantHandler } from '../routing/contract-route.ts';
import { parseChangesQuery } from './changes-query.ts';
import { feedWalk, positionCursor, walkAfter } from './feed-walk.ts';
import type { HeldRequests } from './held-requests.ts';
import { sendFeedStream, streamMedia } from './stream-response.ts';

/** Changes per chunk of a stream: a page's largest, read in one snapshot (feed-stream.ts). */
const STREAM_CHUNK_ITEMS = 200;

/**
 * GET /v1/changes (docs/public-data-api-v1.md, "Change feed"; docs/decisions/0013-change-feed.md):
 * the rows and tombstones of the listed types after a position, merged in (change time, type, id)
 * order (projections/src/read/changes.ts), with each upsert's document as its item endpoint
 * serves it, all read in one snapshot with the file's sync state. Every page's links.next is the
 * position after it (the request's own when the page is empty), signed with the types and the
 * walk's floor (feed-walk.ts). `wait` holds an empty page until a commit (held-requests.ts).
 */

export function changesHandler(app: FastifyInstance, held: HeldRequests): TenantHandler<'listChanges'> {
  const path = app.contract.operation('listChanges').path;
  return async (request, reply, tenant) => {
    const query = parseChangesQuery(request.query, tenant);
    const media = streamMedia(request.headers.accept);
    if (media === undefined && query.live)
      throw invalidParameter(
        'live',
        'a live feed is a stream: ask for it with Accept: application/x-ndjson or text/event-stream',
      );
    if (media !== undefined && query.waitS > 0)
      throw invalidParameter('wait', 'wait holds a page; a stream stays open with live=true instead');
    // A reconnecting EventSource resumes from the id of the last position event it received.
    const lastEventId = media === 'sse' ? request.headers['last-event-id'] : undefined;
    if (Array.isArray(lastEventId)) throw invalidParameter('Last-Event-ID', 'give it once');
    const start = feedWalk(query, tenant, cursorSecrets(app.config), lastEventId ?? query.cursor);
    const companyId = tenant.company.id;
    const { types, typeFilter, position, walk } = start;
    const span = recordingSpan(request);
    const traced = span !== undefined;
    const include = [...query.include].map(([type, names]) => [type, [...names]] as const);
    const link = (cursor: string | undefined, sync: string | undefined) =>
      pageUrl(app.config.publicBaseUrl, path, [
        ['filter[type]', sync === undefined ? typeFilter : undefined],
        ['include[sites]', query.raw.sites],
        ['include[equipment]', query.raw.equipment],
        ['limit', String(query.limit)],
        ['wait', query.waitS > 0 ? String(query.waitS) : undefined],
        ['sync', sync],
        ['cursor', cursor],
      ]);
    if (media !== undefined) {
      // The walk in chunks on the event loop, each its own read snapshot (feed-stream.ts).
      return sendFeedStream(app, request, reply, {
        media,
        start,
        held,
        companyId,
        live: query.live,
        read: (at) => {
          const chunk = readChangesPage(app.projections, {
            companyId,
            types: at.types,
            position: at.position,
            limit: STREAM_CHUNK_ITEMS,
            include,
            walk: at.walk,
            traced,
          });
          noteFeedRead(span, { count: chunk.items.length, appliedIn: chunk.appliedIn });
          return chunk;
        },
        position: (at, state) => {
          const cursor = positionCursor(app.config.cursorSecret, at, state);
          return { cursor, next: link(cursor, undefined) };
        },
      });
    }
    const input: ChangesPageInput = { companyId, types, position, limit: query.limit, include, walk, traced };
    // On a reader thread when there are some (read-pool/), else here on the loop: the same read.
    const read = () =>
      app.readPool
        ? app.readPool.read(tenant.key.id, 'changes', input)
        : Promise.resolve(readChangesPage(app.projections, input));
    let result = await read();
    // An empty page that stopped at its budget (has_more) is answered at once: it is not caught up.
    if (isEmpty(result) && !result.hasMore && query.waitS > 0 && !held.closing) {
      // The key's share of held requests first (429 beyond it: plugins/fair-shares.ts), then the
      // process's (503): a key at its share is refused alone, not everyone once the process is full.
      const share = app.fairShares.hold(request);
      try {
        held.acquire();
        const gone = new AbortController();
        const onClose = () => {
          if (!reply.raw.writableFinished) gone.abort();
        };
        reply.raw.once('close', onClose);
        try {
          const deadline = Date.now() + query.waitS * 1000;
          while (isEmpty(result) && !result.hasMore) {
            const left = deadline - Date.now();
            if (left <= 0) break;
            const outcome = await held.wait(companyId, markOf(result.state), left, gone.signal);
            if (outcome !== 'changed') break;
            result = await read();
          }
        } finally {
          reply.raw.removeListener('close', onClose);
          held.release();
        }
      } finally {
        share.release();
      }
    }
    noteFeedRead(span, {
      count: 'items' in result ? result.items.length : result.count,
      appliedIn: result.appliedIn,
    });
    const next = positionCursor(app.config.cursorSecret, walkAfter(start, result), result.state);
    const links = {
      self: link(query.cursor, query.syncToken),
      next: link(next, undefined),
    };
    const meta = { page: { limit: query.limit, has_more: result.hasMore } };
    reply.type(JSON_UTF8);
    return pageResponse(
      '{"data":[',
      result,
      `],"meta":${JSON.stringify(meta)},"links":${JSON.stringify(links)}}`,
    );
  };
}

function isEmpty(read: ChangesPageRead | ChangesPageBytes): boolean {
  return 'items' in read ? read.items.length === 0 : read.count === 0;
}

function markOf(state: SyncState) {
  return { generation: state.generation, lastChangedUs: state.lastChangedUs };
}
