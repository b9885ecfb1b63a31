import { type ChangePosition, FEED_START, type SyncState } from '@pda/projections/read';
import type { FastifyInstance } from 'fastify';
import { type CursorBinding, cursorSecrets, signCursor, verifyCursor } from '../collection/cursor.ts';
import { pageUrl } from '../collection/links.ts';
import { CURSOR_DETAIL, invalidCursor } from '../errors/api-error.ts';
import { pageResponse } from '../http/page-bytes.ts';
import {
  type ChangesPageInput,
  type ChangesPageRead,
  readChangesPage,
} from '../read-pool/changes-page-read.ts';
import type { ChangesPageBytes } from '../read-pool/reader-protocol.ts';
import { JSON_UTF8 } from '../resources/members.ts';
import type { TenantHandler } from '../routing/contract-route.ts';
import { verifySyncToken } from '../sync/sync-token.ts';
import { parseChangesQuery, syncTokenTypes } from './changes-query.ts';
import type { HeldRequests } from './held-requests.ts';

/**
 * GET /v1/changes (docs/public-data-api-v1.md, "Change feed"; docs/decisions/0013-change-feed.md):
 * the rows and tombstones of the listed types after a position, merged in (change time, type, id)
 * order (projections/src/read/changes.ts), with each upsert's document as its item endpoint
 * serves it, all read in one snapshot with the file's sync state. Every page's links.next is the
 * position after it (the request's own when the page is empty), signed with the types and the
 * walk's floor (below). `wait` holds an empty page until a commit (held-requests.ts).
 *
 * The floor F: deletes at or after F had their tombstone when the walk began (the tombstone
 * horizon of its first page; W + 1 for a walk from a sync token). A walk at position p is complete
 * while the file still keeps every tombstone above p that may matter: the horizon H has not moved
 * past both p + 1 and F. Tombstones below F that are gone belong to deletes before the walk began,
 * of rows it never listed.
 */

/** Cursor binding resource: no resource of the registry can be named like this. */
const FEED = 'changes';

export function changesHandler(app: FastifyInstance, held: HeldRequests): TenantHandler<'listChanges'> {
  const path = app.contract.operation('listChanges').path;
  return async (request, reply, tenant) => {
    const query = parseChangesQuery(request.query, tenant);
    const secrets = cursorSecrets(app.config);
    const companyId = tenant.company.id;
    let types = query.types;
    let position: ChangePosition = FEED_START;
    /** Generation and floor of the walk; undefined on its first page from the start. */
    let walk: { generation: number; floorUs: number } | undefined;
    if (query.syncToken !== undefined) {
      const verified = verifySyncToken(secrets, query.syncToken, { c: companyId, r: undefined });
      types = syncTokenTypes(verified.collection, verified.filters, tenant);
      // Before every change at W + 1: the change at W itself was visible to the token's walk.
      position = { changedUs: verified.start.watermarkUs + 1, table: '', id: '' };
      walk = { generation: verified.start.generation, floorUs: verified.start.watermarkUs + 1 };
    }
    const typeFilter = types.join(',');
    const binding: CursorBinding = { c: companyId, r: FEED, s: '', f: `type=${typeFilter}` };
    if (query.cursor !== undefined) {
      const at = verifyCursor(secrets, query.cursor, binding, 3);
      if (at.direction !== 'after' || at.walk === undefined) throw invalidCursor(CURSOR_DETAIL);
      position = changePosition(at.position);
      walk = { generation: at.walk.generation, floorUs: at.walk.watermarkUs };
    }
    const input: ChangesPageInput = {
      companyId,
      types,
      position,
      limit: query.limit,
      include: [...query.include].map(([type, names]) => [type, [...names]] as const),
      walk,
    };
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
    const { state } = result;
    const floorUs = walk?.floorUs ?? state.tombstonesSinceUs;
    // A page that stopped short at its budget continues after the last tombstone it passed.
    const nextPosition = result.reached ?? result.last ?? position;
    const next = signCursor(app.config.cursorSecret, binding, {
      direction: 'after',
      position: [String(nextPosition.changedUs), nextPosition.table, nextPosition.id],
      walk: { generation: walk?.generation ?? state.generation, watermarkUs: floorUs },
    });
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

/**
 * A verified cursor's position: change time, table ('' = before all), id (signed by us: a check).
 * The table may be one no type exports: a page that stopped at its budget of tombstones continues
 * after the last one it passed, a site contact's say (readTombstones, `reached`).
 */
function changePosition(values: readonly string[]): ChangePosition {
  const [changed, table, id] = values;
  const changedUs = Number(changed);
  if (
    !Number.isSafeInteger(changedUs) ||
    changedUs < 0 ||
    table === undefined ||
    id === undefined ||
    !/^[a-z_]*$/.test(table)
  ) {
    throw invalidCursor(CURSOR_DETAIL);
  }
  return { changedUs, table, id };
}
