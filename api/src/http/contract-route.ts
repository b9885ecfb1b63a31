import type { FastifyInstance, FastifySchema, RouteHandlerMethod, RouteOptions } from 'fastify';

/**
 * A route built from its contract operation: URL, validation and response schemas, credential and
 * scopes all come from api/openapi.yaml; the route file contributes only the handler.
 */
export function contractRoute(
  app: FastifyInstance,
  operationId: string,
  handler: RouteHandlerMethod,
): RouteOptions {
  const operation = app.contract.operation(operationId);
  return {
    method: operation.method,
    url: operation.url,
    schema: operation.schema as FastifySchema,
    config: { operation },
    handler,
  };
}
