import { createHash } from 'node:crypto';
import { decodeQueryComponent } from './query-string.ts';

/**
 * Cursors and sync tokens in a logged URL, replaced by a short digest. They are signed, not
 * encrypted: their base64url JSON holds the sort values of the page boundary (a site's name) and
 * the walk's position, which have no place in logs. The digest still lets one follow a walk through
 * the log (the same value logs the same digest): `cursor=#3f9a1c0b7e52`. A name is judged decoded,
 * as the query-string parser reads it (query-string.ts): `%63ursor=` is the cursor too.
 */

const OPAQUE_PARAMETERS = new Set(['cursor', 'sync']);

export function hashOpaqueValues(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt === -1) return url;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      if (equals === -1) return pair;
      const rawName = pair.slice(0, equals);
      const name = decodeQueryComponent(rawName) ?? rawName;
      if (!OPAQUE_PARAMETERS.has(name.toLowerCase())) return pair;
      const digest = createHash('sha256')
        .update(pair.slice(equals + 1))
        .digest('hex')
        .slice(0, 12);
      return `${rawName}=#${digest}`;
    })
    .join('&');
  return `${url.slice(0, queryAt)}?${query}`;
}
