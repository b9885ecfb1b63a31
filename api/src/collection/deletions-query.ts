import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import { readableTypes, requireScope, type Tenant } from '../auth/authorize.ts';
import type { ContractQuery } from '../contract/operation-types.ts';
import { invalidParameter } from '../errors/api-error.ts';
import { exclusiveWith } from '../sync/sync-token.ts';
import { clampLimit } from './collection-query.ts';

/**
 * The parameters of GET /v1/deletions after the contract's schema checked their shape
 * (docs/public-data-api-v1.md, "Deletions"): the time with the same safety overlap as
 * filter[updated_since], and the resource types, each needing its read scope.
 */

/** The query of listDeletions as validated (each given once, `limit` an integer, 50 when absent). */
export type DeletionsParameters = ContractQuery<'listDeletions'>;

export interface DeletionsQuery {
  readonly limit: number;
  /**
   * Tombstones at or after this change time (µs): filter[deleted_since] minus the overlap; undefined
   * with a sync token (the handler takes it from the token) and without a time (every one kept).
   */
  readonly sinceUs: number | undefined;
  /** The types listed, in registry order (so `services,sites` and `sites,services` are one query). */
  readonly types: readonly ResourceName[];
  /** Canonical filters for the cursor binding (the time filter's part is the handler's with a token). */
  readonly filters: string;
  /** The types' part of the filters: what a sync token binds. */
  readonly typeFilter: string;
  readonly cursor: string | undefined;
  readonly syncToken: string | undefined;
  /** The parameters as given, carried into links. */
  readonly raw: { readonly deletedSince: string | undefined; readonly type: string | undefined };
}

/**
 * `sync` replaces both filters: it names the types it was issued for (a token of a walk over
 * `filter[type]=sites` lists sites), so neither may come with it.
 */
export function parseDeletionsQuery(
  query: DeletionsParameters,
  tenant: Tenant,
  overlapMs: number,
): DeletionsQuery {
  const { 'filter[deleted_since]': deletedSince, 'filter[type]': type, sync: syncToken, cursor } = query;
  if (syncToken !== undefined) {
    if (deletedSince !== undefined) throw exclusiveWith('filter[deleted_since]');
    if (type !== undefined) throw exclusiveWith('filter[type]');
    return {
      limit: clampLimit(query.limit),
      sinceUs: undefined,
      types: [],
      filters: '',
      typeFilter: '',
      cursor,
      syncToken,
      raw: { deletedSince, type },
    };
  }
  const types = type === undefined ? readableTypes(tenant, 'deletions') : namedTypes(type, tenant);
  const typeFilter = `type=${types.join(',')}`;
  // Without a time: every deletion still kept, the deletions part of a full export (its last page
  // hands out the token of the next run).
  let ms: number | undefined;
  if (deletedSince !== undefined) {
    ms = Date.parse(deletedSince);
    if (!Number.isFinite(ms)) {
      throw invalidParameter('filter[deleted_since]', 'must be an RFC 3339 date-time with a time zone');
    }
  }
  return {
    limit: clampLimit(query.limit),
    sinceUs: ms === undefined ? undefined : (ms - overlapMs) * 1000,
    types,
    filters: `deleted_since=${ms ?? 'kept'};${typeFilter}`,
    typeFilter,
    cursor,
    syncToken,
    raw: { deletedSince, type },
  };
}

/** The types a sync token bound (`type=a,b`), each still needing its read scope. */
export function tokenTypes(typeFilter: string, tenant: Tenant): ResourceName[] {
  return namedTypes(typeFilter.slice('type='.length), tenant);
}

/** Named types: each must be an exported resource and needs its read scope (403 naming it). */
function namedTypes(value: string, tenant: Tenant): ResourceName[] {
  const named = new Set(value.split(','));
  for (const name of named) {
    if (!(RESOURCE_NAMES as readonly string[]).includes(name)) {
      throw invalidParameter('filter[type]', `unknown type ${name}; one of ${RESOURCE_NAMES.join(', ')}`);
    }
  }
  const types = RESOURCE_NAMES.filter((name) => named.has(name));
  for (const name of types) requireScope(tenant, RESOURCES[name].scope, `needed for filter[type]=${name}`);
  return types;
}
