import { invalidParameter } from '../http/api-error.ts';
import type { Resource } from '../resources/resource.ts';
import { exclusiveWith } from '../sync/sync-token.ts';
import { parseFields, parseInclude } from './members.ts';
import { type ParsedSort, parseSort } from './sort.ts';

/**
 * The collection parameters of a request, after the contract's schema has checked their shape:
 * here their meaning is checked and normalised (every failure names its parameter).
 */

export const MAX_LIMIT = 200;

export interface CollectionQuery {
  readonly limit: number;
  readonly sort: ParsedSort;
  readonly include: ReadonlySet<string>;
  readonly fields: ReadonlySet<string> | null;
  /** Canonical filters for the cursor binding ('' when none). */
  readonly filters: string;
  readonly changedSinceUs: number | undefined;
  readonly cursor: string | undefined;
  /** `sync` as given (checked by the handler: api/src/sync/sync-token.ts). */
  readonly syncToken: string | undefined;
  /** The parameters as given (normalised), carried into links. */
  readonly raw: {
    readonly sort: string | undefined;
    readonly include: string | undefined;
    readonly fields: string | undefined;
    readonly updatedSince: string | undefined;
  };
}

/**
 * `overlapMs` widens filter[updated_since] (docs/decisions/0004-change-time-for-updated-since.md;
 * API_UPDATED_SINCE_OVERLAP_MS, 60 s by default): it covers clock skew between the partner and us
 * and a change time assigned just before a commit that became visible after the partner's run
 * started. Duplicates are allowed, misses not.
 */
export function parseCollectionQuery(
  query: Record<string, unknown>,
  resource: Resource,
  overlapMs: number,
): CollectionQuery {
  const sort = queryText(query, 'sort');
  const include = queryText(query, 'include');
  const fields = queryText(query, `fields[${resource.name}]`);
  const updatedSince = queryText(query, 'filter[updated_since]');
  const syncToken = queryText(query, 'sync');
  if (syncToken !== undefined && updatedSince !== undefined) throw exclusiveWith('filter[updated_since]');
  let changedSinceUs: number | undefined;
  let filters = '';
  if (updatedSince !== undefined) {
    const ms = Date.parse(updatedSince);
    if (!Number.isFinite(ms)) {
      throw invalidParameter('filter[updated_since]', 'must be an RFC 3339 date-time with a time zone');
    }
    changedSinceUs = (ms - overlapMs) * 1000;
    filters = `updated_since=${ms}`;
  }
  return {
    limit: clampLimit(query.limit),
    sort: parseSort(sort),
    include: parseInclude(include, resource),
    fields: parseFields(fields, resource),
    filters,
    changedSinceUs,
    cursor: queryText(query, 'cursor'),
    syncToken,
    raw: { sort, include, fields, updatedSince },
  };
}

/**
 * The contract (docs/public-data-api-v1.md, "Limits") clamps rather than rejects: above 200 → 200,
 * below 1 → 1; not an integer → 400.
 */
export function clampLimit(value: unknown): number {
  if (value === undefined) return 50;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw invalidParameter('limit', 'must be an integer');
  return Math.min(MAX_LIMIT, Math.max(1, value));
}

/** Only item parameters: include and fields. */
export function parseItemQuery(query: Record<string, unknown>, resource: Resource) {
  const include = parseInclude(queryText(query, 'include'), resource);
  return { include, fields: parseFields(queryText(query, `fields[${resource.name}]`), resource) };
}

/** A query parameter given at most once (a repeated one is an array: refused). */
export function queryText(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, 'must be given once');
  return value;
}
