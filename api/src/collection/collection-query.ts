import type {
  ContractQuery,
  ItemOperationId,
  KeysOfEach,
  ListOperationId,
} from '../contract/operation-types.ts';
import { invalidParameter } from '../errors/api-error.ts';
import { parseFields, parseInclude } from '../resources/members.ts';
import type { Resource } from '../resources/resource.ts';
import { exclusiveWith } from '../sync/sync-token.ts';
import { type ParsedSort, parseSort } from './sort.ts';

/**
 * The collection parameters of a request, after the contract's schema has checked their shape
 * (Fastify's validation: each given once, `limit` an integer, 50 when absent): here their meaning
 * is checked and normalised (every failure names its parameter).
 */

export const MAX_LIMIT = 200;

/** `fields[<resource>]`: each operation has the one of its own resource. */
type FieldsParameters = { readonly [name: `fields[${string}]`]: string | undefined };

/**
 * The query of any resource's list operation as validated (ContractQuery of the contract's list
 * operations, which all fit it: the handler is one for every resource).
 */
export type CollectionParameters = FieldsParameters & {
  readonly limit: number;
  readonly sort?: string;
  readonly include?: string;
  readonly 'filter[updated_since]'?: string;
  readonly sync?: string;
  readonly cursor?: string;
};

/** The query of any resource's item operation as validated. */
export type ItemParameters = FieldsParameters & { readonly include?: string };

// Each name read above is a query parameter of the contract's operations: compiles only while so.
type Named<T> = Exclude<keyof T, `fields[${string}]`>;
type Within<Of, T extends Of> = T;
export type CheckedNames =
  | Within<KeysOfEach<ContractQuery<ListOperationId>>, Named<CollectionParameters>>
  | Within<KeysOfEach<ContractQuery<ItemOperationId>>, Named<ItemParameters>>;

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
  query: CollectionParameters,
  resource: Resource,
  overlapMs: number,
): CollectionQuery {
  const { sort, include, sync: syncToken } = query;
  const fields = query[`fields[${resource.name}]`];
  const updatedSince = query['filter[updated_since]'];
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
    cursor: query.cursor,
    syncToken,
    raw: { sort, include, fields, updatedSince },
  };
}

/**
 * The contract (docs/public-data-api-v1.md, "Limits") clamps rather than rejects: above 200 → 200,
 * below 1 → 1 (validation already refused what is not a 32-bit integer, and filled in 50).
 */
export function clampLimit(value: number): number {
  return Math.min(MAX_LIMIT, Math.max(1, value));
}

/** Only item parameters: include and fields. */
export function parseItemQuery(query: ItemParameters, resource: Resource) {
  const include = parseInclude(query.include, resource);
  return { include, fields: parseFields(query[`fields[${resource.name}]`], resource) };
}
