import { requireScope, type Tenant } from '../auth/authorize.ts';
import type { Resource } from '../resources/resource.ts';

/** An included relation needs the scope of its own resource too (api/README.md, `include`). */
export function requireIncludeScopes(tenant: Tenant, resource: Resource, include: ReadonlySet<string>): void {
  for (const name of include) {
    const scope = resource.relations[name]?.scope;
    if (scope) requireScope(tenant, scope, `needed for include=${name}`);
  }
}
