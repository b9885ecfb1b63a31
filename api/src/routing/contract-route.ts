import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteOptions,
} from 'fastify';
import type { Tenant } from '../auth/authorize.ts';
import type {
  ContractBody,
  ContractParams,
  ContractQuery,
  OperationId,
} from '../contract/operation-types.ts';

/**
 * A route built from its contract operation: URL, validation and response schemas, credential and
 * scopes all come from api/openapi.yaml; the route file contributes only the handler, whose
 * request is typed from the same contract (contract/operation-types.ts): `request.query` and
 * `request.params` are the operation's parameters as Fastify validated them.
 */

export interface ContractRouteGeneric<Id extends OperationId> extends RouteGenericInterface {
  Querystring: ContractQuery<Id>;
  Params: ContractParams<Id>;
}

export type ContractRequest<Id extends OperationId> = FastifyRequest<ContractRouteGeneric<Id>>;
export type ContractReply<Id extends OperationId> = FastifyReply<ContractRouteGeneric<Id>>;
/**
 * What a handler answers: the operation's 200 body (checked against the contract when the handler
 * builds an object), JSON text it joined itself, or its bytes (the collections' stored documents:
 * resources/members.ts, http/page-bytes.ts), or the reply it already sent (a 304).
 */
export type ContractAnswer<Id extends OperationId> = ContractBody<Id> | string | Buffer | FastifyReply;
export type ContractHandler<Id extends OperationId> = (
  request: ContractRequest<Id>,
  reply: ContractReply<Id>,
) => Promise<ContractAnswer<Id>>;
/** The handler of an operation that takes a key: called with the request's tenant. */
export type TenantHandler<Id extends OperationId> = (
  request: ContractRequest<Id>,
  reply: ContractReply<Id>,
  tenant: Tenant,
) => Promise<ContractAnswer<Id>>;

export type ContractRouteOptions<Id extends OperationId> = RouteOptions<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  ContractRouteGeneric<Id>
>;

export function contractRoute<Id extends OperationId>(
  app: FastifyInstance,
  operationId: Id,
  handler: ContractHandler<Id>,
): ContractRouteOptions<Id> {
  const operation = app.contract.operation(operationId);
  return {
    method: operation.method,
    url: operation.url,
    schema: operation.schema as FastifySchema,
    config: { operation },
    handler,
  };
}

/**
 * A route of an operation that takes a key, its handler called with the key's tenant. The auth
 * plugin (plugins/auth.ts) authorises every such operation in preValidation, before any handler,
 * and either sets `request.tenant` or answers the request itself; an operation the contract lets
 * in without a key has no tenant, so it cannot be registered here.
 */
export function tenantRoute<Id extends OperationId>(
  app: FastifyInstance,
  operationId: Id,
  handler: TenantHandler<Id>,
): ContractRouteOptions<Id> {
  if (app.contract.operation(operationId).anonymous) {
    throw new Error(`${operationId} takes no key: its handler has no tenant (use contractRoute)`);
  }
  return contractRoute(app, operationId, (request, reply) => {
    const tenant = request.tenant;
    if (tenant === null) throw new Error(`${operationId}: no tenant, the auth hook did not run`);
    return handler(request, reply, tenant);
  });
}
