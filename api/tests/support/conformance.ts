import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse as Response } from 'fastify';
import { expect } from 'vitest';
import { loadContract } from '../../src/contract/load-contract.ts';

/**
 * Checks a response against the contract the way Schemathesis would: the status is documented
 * for the operation, the content type is the documented one, the body validates against the
 * documented schema (JSON Schema 2020-12, formats included), and required headers are present.
 */

type Schema = Record<string, unknown>;
interface OperationDoc {
  responses: Record<
    string,
    { content?: Record<string, { schema: Schema }>; headers?: Record<string, Schema> }
  >;
}

const contract = loadContract();
const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validators = new Map<Schema, ReturnType<typeof ajv.compile>>();

function operationDoc(operationId: string): OperationDoc {
  const paths = (
    contract.document as unknown as {
      paths: Record<string, Record<string, OperationDoc & { operationId?: string }>>;
    }
  ).paths;
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      if (operation.operationId === operationId) return operation;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

export function expectConforms(response: Response, operationId: string): void {
  const documented = operationDoc(operationId).responses[String(response.statusCode)];
  expect(
    documented,
    `status ${response.statusCode} documented for ${operationId}: ${response.body}`,
  ).toBeDefined();
  const mediaType = String(response.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  const content = documented!.content?.[mediaType];
  expect(content, `${mediaType} documented for ${operationId} ${response.statusCode}`).toBeDefined();
  let validate = validators.get(content!.schema);
  if (!validate) {
    validate = ajv.compile(content!.schema);
    validators.set(content!.schema, validate);
  }
  const valid = validate(response.json());
  expect(valid, `${operationId} ${response.statusCode} body: ${ajv.errorsText(validate.errors)}`).toBe(true);
  for (const [name, header] of Object.entries(documented!.headers ?? {})) {
    if (header.required === true) {
      expect(
        response.headers[name.toLowerCase()],
        `header ${name} on ${operationId} ${response.statusCode}`,
      ).toBeDefined();
    }
  }
}

/** A problem document with this code, conforming to the contract. */
export function expectProblem(response: Response, operationId: string, status: number, code: string): void {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.json().code).toBe(code);
  expectConforms(response, operationId);
}
