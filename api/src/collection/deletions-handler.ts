import {
  type Deletion,
  type DeletionPosition,
  type PageTable,
  readDeletions,
  readTombstonesSince,
} from '@pda/projections';
import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { ApiError, CURSOR_DETAIL, invalidCursor } from '../http/api-error.ts';
import { type CursorBinding, cursorSecrets, signCursor, verifyCursor } from './cursor.ts';
import { parseDeletionsQuery } from './deletions-query.ts';
import { pageUrl } from './links.ts';
import { pageLinks } from './page-links.ts';

/**
 * GET /v1/deletions (docs/public-data-api-v1.md, "Deletions"): one keyset page of the company
 * file's tombstones of the asked types, oldest first, with the rules of every collection (signed
 * cursors bound to the query, links carrying every parameter). The file's retention horizon is
 * read in the same snapshot as the page: a time before it answers 410, never a page that could
 * be missing deletions.
 */

const TABLE_TYPES = new Map<string, ResourceName>(
  RESOURCE_NAMES.map((name) => [RESOURCES[name].table, name]),
);

/** Cursor binding resource: no resource of the registry can be named like this. */
const FEED = 'deletions';

export function deletionsHandler(app: FastifyInstance): RouteHandlerMethod {
  return async (request) => {
    const tenant = request.tenant!;
    const path = request.routeOptions.config.operation!.path;
    const query = parseDeletionsQuery(
      request.query as Record<string, unknown>,
      tenant,
      app.config.updatedSinceOverlapMs,
    );
    const binding: CursorBinding = { c: tenant.company.id, r: FEED, s: '', f: query.filters };
    const at = query.cursor ? verifyCursor(cursorSecrets(app.config), query.cursor, binding, 3) : undefined;
    const position = at && deletionPosition(at.position);

    const handle = app.projections.company(tenant.company.id);
    const tables = query.types.map((name) => RESOURCES[name].table as PageTable);
    const { page, keptSinceUs } = handle.snapshot(() => ({
      keptSinceUs: readTombstonesSince(handle),
      page: readDeletions(handle, {
        tables,
        sinceUs: query.sinceUs,
        limit: query.limit,
        direction: at?.direction ?? 'after',
        position,
      }),
    }));
    if (query.sinceUs < keptSinceUs) {
      throw new ApiError(
        'sync_window_expired',
        `Deletions of this company are kept since ${isoMicros(keptSinceUs)}; filter[deleted_since] (minus the ` +
          'safety overlap) is older, so the list could be incomplete. Run a full export, then sync ' +
          'from the time it started.',
      );
    }

    const secret = app.config.cursorSecret;
    const link = (cursor: string | undefined) =>
      pageUrl(app.config.publicBaseUrl, path, [
        ['filter[deleted_since]', query.raw.deletedSince],
        ['filter[type]', query.raw.type],
        ['limit', String(query.limit)],
        ['cursor', cursor],
      ]);
    const { next, prev } = pageLinks({
      at,
      rows: page.rows,
      hasMore: page.hasMore,
      positionOf: (row: Deletion) => [String(row.changedUs), row.table, row.id],
      link: (boundary) => link(boundary && signCursor(secret, binding, boundary)),
    });
    return {
      data: page.rows.map((row) => ({
        type: TABLE_TYPES.get(row.table),
        id: row.id,
        deleted_at: isoMicros(row.changedUs),
      })),
      meta: { page: { limit: query.limit, has_more: next !== null } },
      links: { self: link(query.cursor), next, prev },
    };
  };
}

/** A verified cursor's keyset values: change time, table, id (signed by us, so only a check). */
function deletionPosition(values: readonly string[]): DeletionPosition {
  const [changed, table, id] = values;
  const changedUs = Number(changed);
  if (
    !Number.isSafeInteger(changedUs) ||
    table === undefined ||
    id === undefined ||
    !TABLE_TYPES.has(table)
  ) {
    throw invalidCursor(CURSOR_DETAIL);
  }
  return { changedUs, table, id };
}

/** µs since the epoch → ISO 8601 UTC with microseconds, like every timestamp of the contract. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}
