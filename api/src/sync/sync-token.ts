import type { SyncState } from '@pda/projections/read';
import { ApiError, invalidParameter } from '../errors/api-error.ts';
import { openPayload, signPayload } from './signed-token.ts';

/** The snapshot a walk's first page read: the file's generation and its highest change time. */
export interface WalkStart {
  readonly generation: number;
  readonly watermarkUs: number;
}
/**
 * Sync tokens (docs/public-data-api-v1.md, "Sync tokens"; docs/decisions/0011-sync-tokens.md): the
 * last page of every walk hands out a signed token naming where the next run starts. It binds the
 * company, the collection (a resource, or the deletions feed with its types), the file's
 * generation and the watermark W: the highest change time in the snapshot of the walk's first
 * page. The one writer assigns change times in commit order, so every change at or below W was
 * visible to that page's walk, and every later one has a change time above W: a call with the
 * token lists exactly the changes above W. No overlap is subtracted and the partner's clock plays
 * no part.
 */

export interface SyncBinding {
  /** Company id. */
  readonly c: string;
  /** The collection: a resource name, or 'deletions'. */
  readonly r: string;
  /** Canonical filters bound with it ('' for a resource; the types for deletions). */
  readonly f: string;
}

interface Payload extends SyncBinding {
  readonly v: 1;
  readonly g: number;
  /** The watermark (µs since the epoch), as text. */
  readonly w: string;
}

const CONTEXT = 'pda-sync-v1.';
const PARAMETER = 'sync';

/** The walk start of a first page: the watermark never stands below the file's creation. */
export function walkStart(state: SyncState): WalkStart {
  // An empty new file has no change time yet; its writer never hands one out below created_us.
  return { generation: state.generation, watermarkUs: Math.max(state.lastChangedUs, state.generation - 1) };
}

export function signSyncToken(secret: string, binding: SyncBinding, start: WalkStart): string {
  const payload: Payload = { v: 1, ...binding, g: start.generation, w: String(start.watermarkUs) };
  return signPayload(secret, CONTEXT, payload);
}

/** What a verified token recorded. */
export interface VerifiedToken {
  readonly start: WalkStart;
  /** The filters it was issued with (the deletions feed's types). */
  readonly filters: string;
  /** The collection it was issued for (a resource name, or 'deletions'). */
  readonly collection: string;
}

/**
 * The walk start a token recorded. A token not signed by us, unreadable, or issued for another
 * company or collection (or, when `expected.f` is given, other filters) answers 400 invalid_cursor
 * naming `sync` (a token is a cursor into the change history).
 */
export function verifySyncToken(
  secrets: readonly string[],
  token: string,
  // `r` undefined: a token of any collection (the change feed starts from any of them).
  expected: Omit<SyncBinding, 'f' | 'r'> & { readonly r: string | undefined; readonly f?: string },
): VerifiedToken {
  const payload = openPayload(secrets, CONTEXT, token) as Partial<Payload> | undefined;
  if (
    payload === undefined ||
    payload === null ||
    payload.v !== 1 ||
    typeof payload.c !== 'string' ||
    typeof payload.r !== 'string' ||
    typeof payload.f !== 'string' ||
    !Number.isSafeInteger(payload.g) ||
    typeof payload.w !== 'string' ||
    !/^\d{1,16}$/.test(payload.w)
  ) {
    throw invalidToken('The sync token is not valid: use links.sync exactly as returned.');
  }
  if (
    payload.c !== expected.c ||
    (expected.r !== undefined && payload.r !== expected.r) ||
    (expected.f !== undefined && payload.f !== expected.f)
  ) {
    throw invalidToken(
      'The sync token was issued for another collection, company or filter: use it only with the request links.sync names.',
    );
  }
  return {
    start: { generation: payload.g as number, watermarkUs: Number(payload.w) },
    filters: payload.f,
    collection: payload.r,
  };
}

/**
 * 410 unless the file can still answer "every change above W": the same generation (a rebuilt
 * file's change times and tombstones start anew) and deletions kept since at most W + 1.
 */
export function requireTokenCovered(start: WalkStart, state: SyncState): void {
  if (start.generation !== state.generation) {
    throw new ApiError(
      'sync_window_expired',
      'The projection of this company was rebuilt since this sync token was issued, so the changes since ' +
        'then cannot be listed exactly. Run a full export, then sync with the token its last page returns.',
    );
  }
  if (start.watermarkUs + 1 < state.tombstonesSinceUs) {
    throw new ApiError(
      'sync_window_expired',
      'This sync token is older than the deletions this company still keeps, so the changes since then ' +
        'cannot be listed exactly. Run a full export, then sync with the token its last page returns.',
    );
  }
}

/** `sync` replaces a time filter: both together are refused, naming both. */
export function exclusiveWith(timeFilter: string): ApiError {
  return invalidParameter(PARAMETER, `cannot be combined with ${timeFilter}: the token says where to start`);
}

function invalidToken(detail: string): ApiError {
  return new ApiError('invalid_cursor', detail, { errors: [{ parameter: PARAMETER, detail }] });
}
