import { createHmac, timingSafeEqual } from 'node:crypto';
import type { KeysetPosition } from '@pda/projections';
import { CURSOR_DETAIL, invalidCursor } from '../http/api-error.ts';

/**
 * Opaque page cursors (AIP-158: bound to the query, unforgeable): base64url(JSON payload) + '.' +
 * base64url(HMAC-SHA256(secret, payload)). The payload binds the company, the resource, the
 * canonical sort and the filters, plus the direction and the keyset position of the boundary row.
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
}

interface Payload extends CursorBinding {
  readonly v: 1;
  readonly d: 'a' | 'b';
  readonly k: readonly string[];
}

const CONTEXT = 'pda-cursor-v1.';

export function signCursor(secret: string, binding: CursorBinding, at: CursorPosition): string {
  const payload: Payload = {
    v: 1,
    ...binding,
    d: at.direction === 'after' ? 'a' : 'b',
    k: at.position,
  };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(secret, body).toString('base64url')}`;
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
  const dot = token.indexOf('.');
  const body = dot > 0 ? token.slice(0, dot) : '';
  const signature = Buffer.from(dot > 0 ? token.slice(dot + 1) : '', 'base64url');
  const signedBy = (secret: string) => {
    const wanted = mac(secret, body);
    return signature.length === wanted.length && timingSafeEqual(signature, wanted);
  };
  if (body === '' || !secrets.some(signedBy)) {
    throw invalidCursor(CURSOR_DETAIL);
  }
  const payload = parse(body);
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
  return { direction: payload.d === 'a' ? 'after' : 'before', position: payload.k };
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

function mac(secret: string, body: string): Buffer {
  return createHmac('sha256', secret).update(CONTEXT).update(body).digest();
}

/** Only reached with a valid signature, so a failure here means a payload from another version. */
function parse(body: string): Payload {
  try {
    const value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload>;
    if (
      value.v === 1 &&
      typeof value.c === 'string' &&
      typeof value.r === 'string' &&
      typeof value.s === 'string' &&
      typeof value.f === 'string' &&
      (value.d === 'a' || value.d === 'b') &&
      Array.isArray(value.k) &&
      value.k.every((item) => typeof item === 'string')
    ) {
      return value as Payload;
    }
  } catch {
    // fall through
  }
  throw invalidCursor(CURSOR_DETAIL);
}
