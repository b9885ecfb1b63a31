import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { deref, type Json } from './deref.ts';

/**
 * The OpenAPI document (api/openapi.yaml) read once and turned into per-operation route data:
 * Fastify URL, JSON Schemas for path/query/header validation and 2xx serialisation, and the
 * credential and scopes each operation requires. Routes take all of this from here by operationId.
 */

export const CONTRACT_FILE = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

export interface ContractOperation {
  readonly operationId: string;
  readonly method: 'GET';
  /** OpenAPI form, e.g. /v1/sites/{siteId}. */
  readonly path: string;
  /** Fastify form, e.g. /v1/sites/:siteId. */
  readonly url: string;
  /** True when the operation takes no credential (`security: [{}]`). */
  readonly anonymous: boolean;
  /** Scopes the key must hold (the bearerAuth role names of the operation). */
  readonly scopes: readonly string[];
  readonly schema: {
    readonly params?: Json;
    readonly querystring?: Json;
    readonly headers?: Json;
    readonly response: Readonly<Record<string, Json>>;
  };
}

export interface Contract {
  readonly document: Json;
  readonly operations: ReadonlyMap<string, ContractOperation>;
  operation(operationId: string): ContractOperation;
  /**
   * Whether the path of `url` (query ignored) is one of the contract's, whatever the method: tells
   * "wrong method" (405) from "no such path" (404), and which preflights to answer.
   */
  hasPath(url: string): boolean;
}

const cache = new Map<string, Contract>();
const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

export function loadContract(file: string = CONTRACT_FILE): Contract {
  const cached = cache.get(file);
  if (cached) return cached;
  const raw = parse(readFileSync(file, 'utf8')) as Json;
  const document = deref(raw, raw) as Record<string, Json>;
  const rootSecurity = (document.security ?? []) as Json[];
  const operations = new Map<string, ContractOperation>();
  const pathMatchers: RegExp[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    const methods = Object.keys(item).filter((key) => METHODS.includes(key));
    pathMatchers.push(pathMatcher(path));
    for (const method of methods) {
      if (method !== 'get')
        throw new Error(`contract: only GET operations are served, found ${method} ${path}`);
      const operation = toOperation(path, item[method] as Record<string, Json>, rootSecurity);
      if (operations.has(operation.operationId)) {
        throw new Error(`contract: duplicate operationId ${operation.operationId}`);
      }
      operations.set(operation.operationId, operation);
    }
  }
  const contract: Contract = {
    document,
    operations,
    operation(operationId) {
      const operation = operations.get(operationId);
      if (!operation) throw new Error(`contract: no operation ${operationId}`);
      return operation;
    },
    hasPath(url) {
      const path = url.split('?', 1)[0] ?? '';
      return pathMatchers.some((matcher) => matcher.test(path));
    },
  };
  cache.set(file, contract);
  return contract;
}

function toOperation(path: string, operation: Record<string, Json>, rootSecurity: Json[]): ContractOperation {
  const operationId = operation.operationId;
  if (typeof operationId !== 'string') throw new Error(`contract: GET ${path} has no operationId`);
  const security = (operation.security ?? rootSecurity) as Record<string, string[]>[];
  const anonymous = security.some((requirement) => Object.keys(requirement).length === 0);
  const scopes = [...new Set(security.flatMap((requirement) => requirement.bearerAuth ?? []))];
  const parameters = (operation.parameters ?? []) as Record<string, Json>[];
  const schema: { params?: Json; querystring?: Json; headers?: Json; response: Record<string, Json> } = {
    response: {},
  };
  const params = objectSchema(parameters, 'path', false);
  if (params) schema.params = params;
  const querystring = objectSchema(parameters, 'query', false);
  // Unknown query parameters are rejected (a misspelt filter must not silently return everything).
  schema.querystring = querystring ?? { type: 'object', properties: {}, additionalProperties: false };
  const headers = objectSchema(parameters, 'header', true);
  if (headers) schema.headers = headers;
  for (const [status, response] of Object.entries(
    operation.responses as Record<string, Record<string, Json>>,
  )) {
    // Only success bodies are serialised through a schema; problem documents are built by one function.
    if (!status.startsWith('2')) continue;
    const content = response.content as Record<string, { schema: Json }> | undefined;
    const json = content?.['application/json'];
    if (json) schema.response[status] = json.schema;
  }
  return {
    operationId,
    method: 'GET',
    path,
    url: path.replace(/\{([^}]+)\}/g, ':$1'),
    anonymous,
    scopes,
    schema,
  };
}

function objectSchema(
  parameters: Record<string, Json>[],
  location: string,
  lowercase: boolean,
): Json | undefined {
  const selected = parameters.filter((parameter) => parameter.in === location);
  if (selected.length === 0) return undefined;
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const parameter of selected) {
    const name = lowercase ? String(parameter.name).toLowerCase() : String(parameter.name);
    properties[name] = parameter.schema as Json;
    if (parameter.required === true) required.push(name);
  }
  const schema: Record<string, Json> = { type: 'object', properties, required };
  if (location !== 'header') schema.additionalProperties = false;
  return schema;
}

function pathMatcher(path: string): RegExp {
  const pattern = path
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}/?$`);
}
