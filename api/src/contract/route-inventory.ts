import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Contract } from './load-contract.ts';

/**
 * docs/public-data-api-v1.md, "Versioning" 2: a route that exists in the service but not in the
 * contract (or the reverse) fails. Routes are collected as they are added (onRoute) and compared
 * with the contract's operations when the app becomes ready; a mismatch stops the app from
 * starting, and a unit test checks the same inventory.
 */

export interface RouteEntry {
  readonly method: string;
  /** OpenAPI form: /v1/sites/{siteId}. */
  readonly path: string;
}

export function collectRoutes(app: FastifyInstance): RouteEntry[] {
  const routes: RouteEntry[] = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // Fastify adds a HEAD route for every GET by itself (exposeHeadRoutes).
      if (method === 'HEAD') continue;
      routes.push({ method, path: route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}') });
    }
  });
  return routes;
}

export function inventoryMismatch(routes: readonly RouteEntry[], contract: Contract): string[] {
  const served = new Set(routes.map((route) => `${route.method} ${route.path}`));
  const documented = new Set([...contract.operations.values()].map((op) => `${op.method} ${op.path}`));
  return [
    ...[...served]
      .filter((route) => !documented.has(route))
      .map((route) => `served but not in the contract: ${route}`),
    ...[...documented]
      .filter((route) => !served.has(route))
      .map((route) => `in the contract but not served: ${route}`),
  ];
}
