import type { KeysetPosition } from '@pda/projections/read';
import { CURSOR_DETAIL, invalidCursor } from '../errors/api-error.ts';
import { openPayload, signPayload } from '../sync/signed-token.ts';
import type { WalkStart } from '../sync/sync-token.ts';

/**
 * Opaque page cursors (AIP-158: bound to the query, unforgeable), signed as ../sync/signed-token.ts says.
 * The payload binds the company, the resource, the canonical sort and the filters, plus the
 * direction and the keyset position of the boundary row, and carries where the walk started (the
 * sync point its last page turns into a sync token: api/src/sync/).
 * `limit`, `include` and `fields` are not bound: they may change between pages.
 */

export interface CursorBinding {
  /** Company id. */
  readonly c: string;
  /** Resource name. */
  readonly r: string;
  /** Canonical sort. */
  readonly s: string;
  /** Canonical filters ('' when none). */
  readonly f: string;
}

export interface CursorPosition {
  readonly direction: 'after' | 'before';
  readonly position: KeysetPosition;
  /** Absent in cursors issued before sync tokens existed: their walk ends without one. */
  readonly walk?: WalkStart | undefined;
}

interface Payload extends CursorBinding {
  readonly v: 1;
  readonly d: 'a' | 'b';
  readonly k: readonly string[];
  /** Walk start: generation and watermark (µs, as text: beyond 2^53 never, but exact either way). */
  readonly g?: number;
  readonly w?: string;
}

const CONTEXT = 'pda-cursor-v1.';

export function signCursor(secret: string, binding: CursorBinding, at: CursorPosition): string {
  const payload: Payload = {
    v: 1,
    ...binding,
    d: at.direction === 'after' ? 'a' : 'b',
    k: at.position,
    ...(at.walk && { g: at.walk.generation, w: String(at.walk.watermarkUs) }),
  };
  return signPayload(secret, CONTEXT, payload);
}

/**
 * `secrets`: the current one first, then the one before a rotation (API_CURSOR_SECRET_PREVIOUS), so
 * partners in the middle of a walk keep paging while the api processes roll over to a new secret.
 */
export function verifyCursor(
  secrets: readonly string[],
  token: string,
  expected: CursorBinding,
  keyCount: number,
): CursorPosition {
  const payload = checkedPayload(openPayload(secrets, CONTEXT, token));
  if (
    payload.c !== expected.c ||
    payload.r !== expected.r ||
    payload.s !== expected.s ||
    payload.f !== expected.f
  ) {
    throw invalidCursor(
      'The cursor was issued for a different query: send it with the same sort and filters (or start again without a cursor).',
    );
  }
  if (payload.k.length !== keyCount) throw invalidCursor('The cursor is not valid for this sort.');
  const walk =
    payload.g !== undefined && payload.w !== undefined
      ? { generation: payload.g, watermarkUs: Number(payload.w) }
      : undefined;
  return { direction: payload.d === 'a' ? 'after' : 'before', position: payload.k, walk };
}

/** The secrets a cursor may be signed with: the current one, then the one before a rotation. */
export function cursorSecrets(config: {
  readonly cursorSecret: string;
  readonly previousCursorSecret: string | undefined;
}): string[] {
  return config.previousCursorSecret
    ? [config.cursorSecret, config.previousCursorSecret]
    : [config.cursorSecret];
}

/** Only reached with a valid signature, so a failure here means a payload from another version. */
function checkedPayload(value: unknown): Payload {
  const payload = value as Partial<Payload> | undefined;
  if (
    payload !== undefined &&
    payload !== null &&
    payload.v === 1 &&
    typeof payload.c === 'string' &&
    typeof payload.r === 'string' &&
    typeof payload.s === 'string' &&
    typeof payload.f === 'string' &&
    (payload.d === 'a' || payload.d === 'b') &&
    Array.isArray(payload.k) &&
    payload.k.every((item) => typeof item === 'string') &&
    (payload.g === undefined || Number.isSafeInteger(payload.g)) &&
    (payload.w === undefined || (typeof payload.w === 'string' && /^\d{1,16}$/.test(payload.w)))
  ) {
    return payload as Payload;
  }
  throw invalidCursor(CURSOR_DETAIL);
}
