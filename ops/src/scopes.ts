// The scope vocabulary of the Public Data API v1 (docs/public-data-api-v1.md, "Scope entry"): the
// one list shared by the key CLI (which refuses unknown scopes) and the api (`/v1/reference/scopes`,
// per-endpoint checks). Keys are issued outside the public API, so there is deliberately no
// `api-keys` scope (docs/public-data-api-v1.md, "Authentication" 2).

export interface ScopeEntry {
  /** `{resource}:{ability}` */
  readonly scope: string;
  readonly resource: string;
  readonly ability: string;
  /** display grouping */
  readonly domain: string;
}

export const SCOPES = [
  { scope: 'sites:read', resource: 'sites', ability: 'read', domain: 'sites' },
  { scope: 'services:read', resource: 'services', ability: 'read', domain: 'catalogue' },
  { scope: 'equipment:read', resource: 'equipment', ability: 'read', domain: 'catalogue' },
  {
    scope: 'equipment-categories:read',
    resource: 'equipment-categories',
    ability: 'read',
    domain: 'catalogue',
  },
  { scope: 'consumables:read', resource: 'consumables', ability: 'read', domain: 'catalogue' },
] as const satisfies readonly ScopeEntry[];

export type Scope = (typeof SCOPES)[number]['scope'];

export const SCOPE_NAMES: readonly Scope[] = SCOPES.map((s) => s.scope);

export function isScope(value: string): value is Scope {
  return (SCOPE_NAMES as readonly string[]).includes(value);
}
