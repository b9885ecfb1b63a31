import { type ChangePosition, FEED_START, type SyncState } from '@pda/projections/read';
import type { ResourceName } from '@pda/schemas/registry';
import type { Tenant } from '../auth/authorize.ts';
import { type CursorBinding, signCursor, verifyCursor } from '../collection/cursor.ts';
import { CURSOR_DETAIL, invalidCursor } from '../errors/api-error.ts';
import type { ChangesPageRead } from '../read-pool/changes-page-read.ts';
import type { ChangesPageBytes } from '../read-pool/reader-protocol.ts';
import { verifySyncToken } from '../sync/sync-token.ts';
import { type ChangesQuery, syncTokenTypes } from './changes-query.ts';

/**
 * Where a walk of the change feed stands, for its pages (changes-handler.ts) and its stream
 * (feed-stream.ts) alike: the types, the position after which it reads, and the walk's generation
 * and floor (docs/decisions/0013-change-feed.md).
 *
 * The floor F: deletes at or after F had their tombstone when the walk began (the tombstone
 * horizon of its first page; W + 1 for a walk from a sync token). A walk at position p is complete
 * while the file still keeps every tombstone above p that may matter: the horizon H has not moved
 * past both p + 1 and F. Tombstones below F that are gone belong to deletes before the walk began,
 * of rows it never listed.
 */
export interface FeedWalk {
  readonly types: readonly ResourceName[];
  /** `filter[type]` of the links (the types, comma-separated). */
  readonly typeFilter: string;
  readonly binding: CursorBinding;
  readonly position: ChangePosition;
  /** Generation and floor of the walk; undefined on its first page from the start. */
  readonly walk: { readonly generation: number; readonly floorUs: number } | undefined;
}

/** Cursor binding resource: no resource of the registry can be named like this. */
const FEED = 'changes';

/**
 * The walk a request starts or continues: from the start, a sync token, or a cursor. `resume` is
 * the cursor to continue from (the query's, or a reconnecting EventSource's Last-Event-ID, which
 * takes the place of the URL's sync token: the token's types, the cursor's position).
 */
export function feedWalk(
  query: ChangesQuery,
  tenant: Tenant,
  secrets: readonly string[],
  resume: string | undefined,
): FeedWalk {
  const companyId = tenant.company.id;
  let types = query.types;
  let position: ChangePosition = FEED_START;
  let walk: FeedWalk['walk'];
  if (query.syncToken !== undefined) {
    const verified = verifySyncToken(secrets, query.syncToken, { c: companyId, r: undefined });
    types = syncTokenTypes(verified.collection, verified.filters, tenant);
    // Before every change at W + 1: the change at W itself was visible to the token's walk.
    position = { changedUs: verified.start.watermarkUs + 1, table: '', id: '' };
    walk = { generation: verified.start.generation, floorUs: verified.start.watermarkUs + 1 };
  }
  const typeFilter = types.join(',');
  const binding: CursorBinding = { c: companyId, r: FEED, s: '', f: `type=${typeFilter}` };
  if (resume !== undefined) {
    const at = verifyCursor(secrets, resume, binding, 3);
    if (at.direction !== 'after' || at.walk === undefined) throw invalidCursor(CURSOR_DETAIL);
    position = changePosition(at.position);
    walk = { generation: at.walk.generation, floorUs: at.walk.watermarkUs };
  }
  return { types, typeFilter, binding, position, walk };
}

/**
 * The walk after a read: its position moves past what was read (a read that stopped short at its
 * budget continues after the last tombstone it passed), and a walk from the start takes the
 * generation and floor of its first read.
 */
export function walkAfter(walk: FeedWalk, read: ChangesPageRead | ChangesPageBytes): FeedWalk {
  const floorUs = walk.walk?.floorUs ?? read.state.tombstonesSinceUs;
  return {
    ...walk,
    position: read.reached ?? read.last ?? walk.position,
    walk: { generation: walk.walk?.generation ?? read.state.generation, floorUs },
  };
}

/** The signed cursor of a walk's position (its generation and floor from `walkAfter`). */
export function positionCursor(secret: string, walk: FeedWalk, state: SyncState): string {
  const { position } = walk;
  return signCursor(secret, walk.binding, {
    direction: 'after',
    position: [String(position.changedUs), position.table, position.id],
    walk: {
      generation: walk.walk?.generation ?? state.generation,
      watermarkUs: walk.walk?.floorUs ?? state.tombstonesSinceUs,
    },
  });
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
