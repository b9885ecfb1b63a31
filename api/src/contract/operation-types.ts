import type { RESOURCES, ResourceName } from '@pda/schemas/registry';
import type { operations } from './generated/openapi.ts';

/**
 * What a route handler reads of its request, typed from the contract: the generated types of
 * api/openapi.yaml (generated/openapi.ts, the file the client is typed from too) give each
 * operation's query and path parameters. Fastify validates them with the same contract's JSON
 * Schemas before any handler runs (contract/load-contract.ts), so these are the types of values
 * already checked: integers coerced, each text parameter given once, unknown names refused, and the
 * schema's defaults filled in (`useDefaults`: `limit` is always there).
 */

export type OperationId = keyof operations;

/** The list and item operations of the registry's resources (@pda/schemas/registry). */
export type ListOperationId = (typeof RESOURCES)[ResourceName]['operations']['list'];
export type ItemOperationId = (typeof RESOURCES)[ResourceName]['operations']['get'];

type ParametersOf<Id extends OperationId> = operations[Id]['parameters'];

/** An operation without parameters of a kind: the empty object Fastify leaves. */
type Present<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;

/** The query parameters whose contract schema has a `default` (tests/operation-types.test.ts). */
export type DefaultedParameter = 'limit';

/** A defaulted parameter is never absent after validation. */
type WithDefaults<Q> = Q extends unknown
  ? string extends keyof Q
    ? Q
    : Omit<Q, DefaultedParameter> & { [K in DefaultedParameter & keyof Q]-?: Exclude<Q[K], undefined> }
  : never;

/** An operation's query after validation (a union over the operations of a union). */
export type ContractQuery<Id extends OperationId> = WithDefaults<Present<ParametersOf<Id>['query']>>;

/** An operation's path parameters (`{ siteId: string }`). */
export type ContractParams<Id extends OperationId> = Present<ParametersOf<Id>['path']>;

/** Read-only data (the registry's constants) fits a body type as well as fresh objects. */
type DeepReadonly<T> = T extends readonly (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** An operation's 200 JSON body (the contract's schema, which serialises it). */
export type ContractBody<Id extends OperationId> = operations[Id]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? DeepReadonly<Body>
  : never;

/** The names of a union's members' keys (`keyof` of a union keeps only the common ones). */
export type KeysOfEach<T> = T extends unknown ? keyof T : never;

// Every operationId the registry names is the contract's: compiles only while that holds.
type Contains<Of, T extends Of> = T;
export type RegistryOperations = Contains<OperationId, ListOperationId | ItemOperationId>;
