import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import { requireScope, type Tenant } from '../auth/authorize.ts';
import { ApiError, invalidParameter } from '../http/api-error.ts';
import { clampLimit, queryText } from './collection-query.ts';

/**
 * The parameters of GET /v1/deletions after the contract's schema checked their shape
 * (docs/public-data-api-v1.md, "Deletions"): the time with the same safety overlap as
 * filter[updated_since], and the resource types, each needing its read scope.
 */

export interface DeletionsQuery {
  readonly limit: number;
  /** Tombstones at or after this change time (µs): filter[deleted_since] minus the overlap. */
  readonly sinceUs: number;
  /** The types listed, in registry order (so `services,sites` and `sites,services` are one query). */
  readonly types: readonly ResourceName[];
  /** Canonical filters for the cursor binding. */
  readonly filters: string;
  readonly cursor: string | undefined;
  /** The parameters as given, carried into links. */
  readonly raw: { readonly deletedSince: string; readonly type: string | undefined };
}

export function parseDeletionsQuery(
  query: Record<string, unknown>,
  tenant: Tenant,
  overlapMs: number,
): DeletionsQuery {
  const deletedSince = queryText(query, 'filter[deleted_since]');
  if (deletedSince === undefined) throw invalidParameter('filter[deleted_since]', 'is required');
  const ms = Date.parse(deletedSince);
  if (!Number.isFinite(ms)) {
    throw invalidParameter('filter[deleted_since]', 'must be an RFC 3339 date-time with a time zone');
  }
  const type = queryText(query, 'filter[type]');
  const types = type === undefined ? scopedTypes(tenant) : namedTypes(type, tenant);
  return {
    limit: clampLimit(query.limit),
    sinceUs: (ms - overlapMs) * 1000,
    types,
    filters: `deleted_since=${ms};type=${types.join(',')}`,
    cursor: queryText(query, 'cursor'),
    raw: { deletedSince, type },
  };
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

/** No filter[type]: every type the key may read; a key that may read none is refused. */
function scopedTypes(tenant: Tenant): ResourceName[] {
  const types = RESOURCE_NAMES.filter((name) => tenant.key.scopes.includes(RESOURCES[name].scope));
  if (types.length === 0) {
    const scopes = RESOURCE_NAMES.map((name) => RESOURCES[name].scope).join(', ');
    throw new ApiError(
      'insufficient_scope',
      `This API key holds none of the read scopes whose deletions are listed (${scopes}).`,
    );
  }
  return types;
}
