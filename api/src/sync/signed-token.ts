import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signed, opaque values the api hands out (page cursors, sync tokens):
 * base64url(JSON payload) + '.' + base64url(HMAC-SHA256(secret, context + payload)). The context
 * keeps one kind from being accepted as another. Nothing here is secret from the holder; the
 * signature only makes the value unforgeable.
 */

export function signPayload(secret: string, context: string, payload: object): string {
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${mac(secret, context, body).toString('base64url')}`;
}

/**
 * The payload of `token` when one of `secrets` signed it (the current one first, then the one
 * before a rotation), else undefined. The payload is only parsed JSON: its shape is the caller's.
 */
export function openPayload(secrets: readonly string[], context: string, token: string): unknown {
  const dot = token.indexOf('.');
  const body = dot > 0 ? token.slice(0, dot) : '';
  const signature = Buffer.from(dot > 0 ? token.slice(dot + 1) : '', 'base64url');
  const signedBy = (secret: string) => {
    const wanted = mac(secret, context, body);
    return signature.length === wanted.length && timingSafeEqual(signature, wanted);
  };
  if (body === '' || !secrets.some(signedBy)) return undefined;
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function mac(secret: string, context: string, body: string): Buffer {
  return createHmac('sha256', secret).update(context).update(body).digest();
}
