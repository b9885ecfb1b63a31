import {
  type Deletion,
  type DeletionPosition,
  type PageTable,
  readDeletions,
  readSyncState,
  type SyncState,
} from '@pda/projections/read';
import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import type { FastifyInstance } from 'fastify';
import { ApiError, CURSOR_DETAIL, invalidCursor } from '../errors/api-error.ts';
import { isoMicros } from '../resources/iso-micros.ts';
import type { TenantHandler } from '../routing/contract-route.ts';
import { ifNoneMatch, notModified, pageEtag, privatePage } from '../sync/conditional.ts';
import {
  requireTokenCovered,
  signSyncToken,
  verifySyncToken,
  type WalkStart,
  walkStart,
} from '../sync/sync-token.ts';
import { type CursorBinding, cursorSecrets, signCursor, verifyCursor } from './cursor.ts';
import { parseDeletionsQuery, tokenTypes } from './deletions-query.ts';
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

export function deletionsHandler(app: FastifyInstance): TenantHandler<'listDeletions'> {
  const path = app.contract.operation('listDeletions').path;
  return async (request, reply, tenant) => {
    const query = parseDeletionsQuery(request.query, tenant, app.config.updatedSinceOverlapMs);
    const secrets = cursorSecrets(app.config);
    let token: WalkStart | undefined;
    let typeFilter = query.typeFilter;
    let types = query.types;
    if (query.syncToken !== undefined) {
      const verified = verifySyncToken(secrets, query.syncToken, { c: tenant.company.id, r: FEED });
      token = verified.start;
      typeFilter = verified.filters;
      types = tokenTypes(typeFilter, tenant);
    }
    const syncBinding = { c: tenant.company.id, r: FEED, f: typeFilter };
    const filters = token ? `sync=${token.watermarkUs};${typeFilter}` : query.filters;
    const binding: CursorBinding = { c: tenant.company.id, r: FEED, s: '', f: filters };
    const at = query.cursor ? verifyCursor(secrets, query.cursor, binding, 3) : undefined;
    const position = at && deletionPosition(at.position);
    // No time and no token: every deletion kept (no 410: nothing is asked for before the horizon).
    const sinceUs = token ? token.watermarkUs + 1 : query.sinceUs;

    const handle = app.projections.company(tenant.company.id);
    const tables = types.map((name) => RESOURCES[name].table as PageTable);
    // A first page that a partner polls: answered 304 from the file's meta row alone when unchanged.
    let etag: string | undefined;
    if (at === undefined) {
      const state = readSyncState(handle);
      requireCovered(token, sinceUs, state);
      etag = pageEtag(request, tenant.company.id, state);
      if (ifNoneMatch(request.headers['if-none-match'], etag)) return notModified(app, request, reply, etag);
    }
    const { page, state } = handle.snapshot(() => ({
      state: readSyncState(handle),
      page: readDeletions(handle, {
        tables,
        sinceUs: sinceUs ?? 0,
        limit: query.limit,
        direction: at?.direction ?? 'after',
        position,
      }),
    }));
    requireCovered(token, sinceUs, state);
    // A walk of every deletion kept claims no time, but it has read up to its cursor: a prune that
    // moved the horizon past that point since may have removed deletions it has not read yet.
    if (
      position &&
      at?.direction === 'after' &&
      sinceUs === undefined &&
      position.changedUs < state.tombstonesSinceUs
    ) {
      throw new ApiError(
        'sync_window_expired',
        'Deletions this walk had not read yet were pruned since its previous page (retention), so it ' +
          'would be incomplete. Start it again from its first page.',
      );
    }
    const walk = at ? at.walk : walkStart(state);

    const secret = app.config.cursorSecret;
    const link = (cursor: string | undefined, sync?: string) =>
      pageUrl(app.config.publicBaseUrl, path, [
        ['filter[deleted_since]', sync === undefined ? query.raw.deletedSince : undefined],
        ['filter[type]', sync === undefined ? query.raw.type : undefined],
        ['limit', String(query.limit)],
        ['sync', sync ?? query.syncToken],
        ['cursor', cursor],
      ]);
    const { next, prev } = pageLinks({
      at,
      rows: page.rows,
      hasMore: page.hasMore,
      reached: page.reached && [String(page.reached.changedUs), page.reached.table, page.reached.id],
      positionOf: (row: Deletion) => [String(row.changedUs), row.table, row.id],
      link: (boundary) => link(boundary && signCursor(secret, binding, { ...boundary, walk })),
    });
    const sync = next === null && walk !== undefined ? signSyncToken(secret, syncBinding, walk) : undefined;
    if (etag !== undefined) privatePage(reply, pageEtag(request, tenant.company.id, state));
    return {
      data: page.rows.map((row) => ({
        type: deletionType(row.table),
        id: row.id,
        deleted_at: isoMicros(row.changedUs),
      })),
      meta: {
        page: { limit: query.limit, has_more: next !== null },
        ...(sync && { sync: { token: sync, as_of: isoMicros(walk!.watermarkUs) } }),
      },
      links: { self: link(query.cursor), next, prev, ...(sync && { sync: link(undefined, sync) }) },
    };
  };
}

/**
 * 410 when the file cannot list every deletion from `sinceUs` on: with a token, a rebuilt file or
 * a watermark older than the kept tombstones (sync-token.ts); with a time, a time before them.
 * Without either, the walk lists what is kept and claims nothing older.
 */
function requireCovered(token: WalkStart | undefined, sinceUs: number | undefined, state: SyncState): void {
  if (token) {
    requireTokenCovered(token, state);
    return;
  }
  if (sinceUs !== undefined && sinceUs < state.tombstonesSinceUs) {
    throw new ApiError(
      'sync_window_expired',
      `Deletions of this company are kept since ${isoMicros(state.tombstonesSinceUs)}; filter[deleted_since] (minus the ` +
        'safety overlap) is older, so the list could be incomplete. Run a full export, then sync ' +
        'from the time it started.',
    );
  }
}

/** The resource type of a tombstone's table (the page read only the tables of `types`). */
function deletionType(table: string): ResourceName {
  const type = TABLE_TYPES.get(table);
  if (type === undefined) throw new Error(`deletions: a tombstone of table ${table}, no resource's`);
  return type;
}

/**
 * A verified cursor's keyset values: change time, table, id (signed by us, so only a check). The
 * table may be one no resource exports: a page that stopped at its budget ends on the last
 * tombstone it passed, a site contact's say (readDeletions, `reached`).
 */
function deletionPosition(values: readonly string[]): DeletionPosition {
  const [changed, table, id] = values;
  const changedUs = Number(changed);
  if (
    !Number.isSafeInteger(changedUs) ||
    table === undefined ||
    id === undefined ||
    !/^[a-z_]+$/.test(table)
  ) {
    throw invalidCursor(CURSOR_DETAIL);
  }
  return { changedUs, table, id };
}
