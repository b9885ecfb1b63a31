import { RESOURCE_NAMES, RESOURCES, type ResourceName } from '@pda/schemas/registry';
import { readableTypes, requireScope, type Tenant } from '../auth/authorize.ts';
import { clampLimit } from '../collection/collection-query.ts';
import { tokenTypes } from '../collection/deletions-query.ts';
import { requireIncludeScopes } from '../collection/include-scopes.ts';
import type { ContractQuery } from '../contract/operation-types.ts';
import { invalidParameter } from '../errors/api-error.ts';
import { parseInclude } from '../resources/members.ts';
import { resourceNamed } from '../resources/resource.ts';
import { exclusiveWith } from '../sync/sync-token.ts';

/**
 * The parameters of GET /v1/changes after the contract's schema checked their shape
 * (docs/public-data-api-v1.md, "Change feed"): the types (each needing its read scope, as on the
 * deletions feed), the includes per type, `wait`, and where the walk starts.
 */

export type ChangesParameters = ContractQuery<'listChanges'>;

export interface ChangesQuery {
  readonly limit: number;
  /** Seconds to hold an empty page (0: answer at once). */
  readonly waitS: number;
  /** A stream that stays open after catching up (feed-stream.ts). */
  readonly live: boolean;
  /** The types listed, in registry order; empty with a sync token (the handler takes them from it). */
  readonly types: readonly ResourceName[];
  /** `include` per resource type (only the listed types' are used). */
  readonly include: ReadonlyMap<ResourceName, ReadonlySet<string>>;
  readonly cursor: string | undefined;
  readonly syncToken: string | undefined;
  /** The includes as given, carried into links. */
  readonly raw: { readonly sites: string | undefined; readonly equipment: string | undefined };
}

export function parseChangesQuery(query: ChangesParameters, tenant: Tenant): ChangesQuery {
  const { 'filter[type]': type, sync: syncToken, cursor, wait, live } = query;
  const sites = query['include[sites]'];
  const equipment = query['include[equipment]'];
  if (syncToken !== undefined) {
    if (type !== undefined) throw exclusiveWith('filter[type]');
    if (cursor !== undefined) throw exclusiveWith('cursor');
  }
  const include = new Map<ResourceName, ReadonlySet<string>>();
  for (const [name, value] of [
    ['sites', sites],
    ['equipment', equipment],
  ] as const) {
    if (value === undefined) continue;
    const resource = resourceNamed(name);
    const names = parseInclude(value, resource);
    requireIncludeScopes(tenant, resource, names);
    include.set(name, names);
  }
  return {
    limit: clampLimit(query.limit),
    waitS: wait ?? 0,
    live: live === true,
    types:
      syncToken !== undefined
        ? []
        : type === undefined
          ? readableTypes(tenant, 'changes')
          : tokenTypes(`type=${type}`, tenant),
    include,
    cursor,
    syncToken,
    raw: { sites, equipment },
  };
}

/**
 * The types a sync token lists: its collection's (a resource's token), or the deletions walk's
 * types; each still needs its read scope.
 */
export function syncTokenTypes(collection: string, filters: string, tenant: Tenant): ResourceName[] {
  if (collection === 'deletions') return tokenTypes(filters, tenant);
  if (!(RESOURCE_NAMES as readonly string[]).includes(collection)) {
    throw invalidParameter('sync', 'the token was issued for a walk the change feed cannot continue');
  }
  const name = collection as ResourceName;
  requireScope(tenant, RESOURCES[name].scope, `needed for the changes of ${name}`);
  return [name];
}
