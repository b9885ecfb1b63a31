import Fastify from 'fastify';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { loadContract } from '../src/contract/load-contract.ts';
import type {
  ContractParams,
  ContractQuery,
  DefaultedParameter,
  ItemOperationId,
  ListOperationId,
} from '../src/contract/operation-types.ts';
import type {} from '../src/fastify-augmentations.ts';
import { contractRoute, tenantRoute } from '../src/routing/contract-route.ts';

/**
 * Handlers are typed from the contract's generated types (api/README.md, "The contract is the
 * source of truth"): the types checked here at compile time (`pnpm --filter @pda/api typecheck`),
 * what they assume of the contract at run time.
 */

describe('operation types', () => {
  test('a parameter is always there after validation exactly when its schema has a default', () => {
    const defaulted = new Set<string>();
    for (const operation of loadContract().operations.values()) {
      const query = operation.schema.querystring as { properties: Record<string, { default?: unknown }> };
      for (const [name, schema] of Object.entries(query.properties)) {
        if (schema.default !== undefined) defaulted.add(name);
      }
    }
    const declared: DefaultedParameter[] = ['limit'];
    expect([...defaulted]).toEqual(declared);
  });

  test('queries and path parameters as the handlers read them', () => {
    expectTypeOf<ContractQuery<'listSites'>['limit']>().toEqualTypeOf<number>();
    expectTypeOf<ContractQuery<'listSites'>>().toHaveProperty('fields[sites]');
    expectTypeOf<ContractQuery<'listDeletions'>['filter[type]']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ContractQuery<'getSite'>>().not.toHaveProperty('limit');
    expectTypeOf<ContractQuery<'getMe'>>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<ContractParams<'getSite'>>().toEqualTypeOf<{ siteId: string }>();
    expectTypeOf<ListOperationId>().toEqualTypeOf<
      'listSites' | 'listServices' | 'listEquipment' | 'listEquipmentCategories' | 'listConsumables'
    >();
    expectTypeOf<ItemOperationId>().toEqualTypeOf<
      'getSite' | 'getService' | 'getEquipment' | 'getEquipmentCategory' | 'getConsumable'
    >();
  });

  test('a tenant route is only an operation that takes a key', async () => {
    const app = Fastify();
    app.decorate('contract', loadContract());
    expect(() => tenantRoute(app, 'getHealth', async () => '')).toThrow(
      'getHealth takes no key: its handler has no tenant (use contractRoute)',
    );
    expect(tenantRoute(app, 'getMe', async () => '').url).toBe('/v1/me');
    expect(contractRoute(app, 'getHealth', async () => '').config).toEqual({
      operation: loadContract().operation('getHealth'),
    });
    await app.close();
  });
});
