import { createHash } from 'node:crypto';
import { type ApiKeyRecord, readApiKeyByHashMemo } from '@pda/projections/read';
import type { ProjectionFiles } from '../company-files/projection-files.ts';

/**
 * What the Authorization header of a request resolves to. Resolved in onRequest WITHOUT throwing
 * (so the rate limiter can meter by key and put its headers on a 401 too); rejected in
 * preValidation by authorize(). The key itself is never stored or logged, only hashed.
 */
export type Credential =
  | { readonly kind: 'none' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'key'; readonly key: ApiKeyRecord }
  | { readonly kind: 'unavailable'; readonly error: unknown };

/** RFC 6750 b64token, bounded: anything else is malformed (and answered like an unknown key). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]{1,512}=*) *$/i;

export function resolveCredential(header: string | string[] | undefined, files: ProjectionFiles): Credential {
  if (header === undefined) return { kind: 'none' };
  if (typeof header !== 'string') return { kind: 'malformed' };
  const match = BEARER.exec(header);
  if (!match) return { kind: 'malformed' };
  const hash = createHash('sha256').update(match[1]!, 'utf8').digest('hex');
  try {
    // Memoised per state of control.sqlite: a committed key change is seen by the next request.
    const key = readApiKeyByHashMemo(files.control(), hash);
    return key ? { kind: 'key', key } : { kind: 'unknown' };
  } catch (error) {
    return { kind: 'unavailable', error };
  }
}
