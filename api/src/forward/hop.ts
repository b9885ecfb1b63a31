import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The headers of a hop between two api nodes of writers split by company (plugins/forward.ts;
 * api/README.md, "Writers split by company"). The forwarding node adds them; the owner believes
 * them only when HOP_SECRET_HEADER holds a shared secret it accepts (API_FORWARD_SECRET_FILE: one,
 * or two during a rotation; the first is the one sent). A partner
 * never sends them; one that does is refused (a wrong secret) or, on a node without forwarding
 * settings, ignored.
 */

/** The shared secret: marks the request as forwarded once by a trusted node (never logged). */
export const HOP_SECRET_HEADER = 'x-pda-hop-secret';
/** The forwarding writer's name (from the ownership file), for the owner's logs. */
export const HOP_FROM_HEADER = 'x-pda-hop-from';
/** The partner's address as the forwarding node saw it (request.ip there), for logs. */
export const HOP_CLIENT_HEADER = 'x-pda-hop-client';
/** The forwarding node's request id: the owner answers with it, so one id follows the request. */
export const HOP_REQUEST_ID_HEADER = 'x-pda-hop-request-id';

export const HOP_HEADERS = [HOP_SECRET_HEADER, HOP_FROM_HEADER, HOP_CLIENT_HEADER, HOP_REQUEST_ID_HEADER];

/** What the owner learnt from a request's hop headers. */
export type Hop =
  | { readonly trusted: true; readonly from: string; readonly client: string }
  | { readonly trusted: false };

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Compares a received secret with each accepted one in constant time (digests: equal lengths
 * whatever was sent), all of them every time: which one matched, or that none did, takes as long.
 * Two during a rotation (config.ts, readForwardSecrets).
 */
export function secretMatcher(
  secrets: readonly string[],
): (received: string | string[] | undefined) => boolean {
  const expected = secrets.map(digest);
  return (received) => {
    if (typeof received !== 'string') return false;
    const got = digest(received);
    let matched = false;
    for (const one of expected) matched = timingSafeEqual(got, one) || matched;
    return matched;
  };
}

/** A header value safe to log: printable ASCII, bounded. */
function loggable(value: string | string[] | undefined, max: number): string {
  if (typeof value !== 'string') return '';
  return value.replace(/[^\x20-\x7e]/g, '?').slice(0, max);
}

/** The hop of a request carrying HOP_SECRET_HEADER; undefined when it carries none. */
export function readHop(
  headers: IncomingMessage['headers'],
  matches: (received: string | string[] | undefined) => boolean,
): Hop | undefined {
  const received = headers[HOP_SECRET_HEADER];
  if (received === undefined) return undefined;
  if (!matches(received)) return { trusted: false };
  return {
    trusted: true,
    from: loggable(headers[HOP_FROM_HEADER], 64),
    client: loggable(headers[HOP_CLIENT_HEADER], 64),
  };
}

const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The request id a trusted hop brings (Fastify's genReqId, app.ts): the forwarding node's, so the
 * partner sees one X-Request-Id and both nodes log it. Anything else gets a new id.
 */
export function hopRequestId(
  request: IncomingMessage,
  matches: ((received: string | string[] | undefined) => boolean) | undefined,
): string | undefined {
  if (matches === undefined) return undefined;
  const id = request.headers[HOP_REQUEST_ID_HEADER];
  if (typeof id !== 'string' || !REQUEST_ID.test(id)) return undefined;
  return matches(request.headers[HOP_SECRET_HEADER]) ? id : undefined;
}
