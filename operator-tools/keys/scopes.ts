// The scope vocabulary of the Public Data API v1 (docs/public-data-api-v1.md, "Scope entry"): the
// table registry's list (@pda/schemas/registry, one `read` scope per exported resource), shared by
// the key CLI (which refuses unknown scopes) and the api (`/v1/reference/scopes`, per-endpoint
// checks). Keys are issued outside the public API, so there is deliberately no `api-keys` scope
// (docs/public-data-api-v1.md, "Authentication" 2).
import { SCOPES, type Scope } from '@pda/schemas/registry';

export { SCOPES, type Scope, type ScopeEntry } from '@pda/schemas/registry';

export const SCOPE_NAMES: readonly Scope[] = SCOPES.map((s) => s.scope);

export function isScope(value: string): value is Scope {
  return (SCOPE_NAMES as readonly string[]).includes(value);
}
