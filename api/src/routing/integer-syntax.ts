import type { ContractOperation } from '../contract/load-contract.ts';
import { invalidParameter } from '../errors/api-error.ts';
import type { ParsedQuery } from '../http/query-string.ts';

/**
 * Ajv coerces any JavaScript number text ('1e2', '0x10', ' 5') into an integer; the contract's
 * integer query parameters are decimal digits only, so anything else is refused before coercion.
 */

const DECIMAL_INTEGER = /^-?[0-9]+$/;
const integerParameters = new WeakMap<ContractOperation, string[]>();

export function checkIntegerSyntax(query: ParsedQuery, operation: ContractOperation): void {
  for (const name of integersOf(operation)) {
    const value = query[name];
    if (typeof value === 'string' && !DECIMAL_INTEGER.test(value)) {
      throw invalidParameter(name, 'must be an integer');
    }
  }
}

function integersOf(operation: ContractOperation): string[] {
  let names = integerParameters.get(operation);
  if (!names) {
    const schema = operation.schema.querystring as
      | { properties?: Record<string, { type?: unknown }> }
      | undefined;
    names = Object.entries(schema?.properties ?? {})
      .filter(([, property]) => property.type === 'integer')
      .map(([name]) => name);
    integerParameters.set(operation, names);
  }
  return names;
}
