import type { ContractOperation } from '../contract/load-contract.ts';
import { invalidParameter } from '../errors/api-error.ts';
import type { ParsedQuery } from '../http/query-string.ts';

/**
 * Every query parameter of the contract takes one value; the query-string parser keeps a repeat as
 * a list, which validation would otherwise refuse with the type's message ("must be an integer")
 * although the value is fine. A follower that appends `wait` to a `links.next` that already carries
 * it is told what it did instead (api/openapi.yaml, the conventions at its top).
 */

const singleValued = new WeakMap<ContractOperation, string[]>();

export function checkSingleValues(query: ParsedQuery, operation: ContractOperation): void {
  for (const name of singleValuedOf(operation)) {
    const value = query[name];
    if (Array.isArray(value)) throw invalidParameter(name, `given ${value.length} times; give it once`);
  }
}

/** The operation's query parameters whose schema is not a list (today: all of them). */
function singleValuedOf(operation: ContractOperation): string[] {
  let names = singleValued.get(operation);
  if (!names) {
    const schema = operation.schema.querystring as
      | { properties?: Record<string, { type?: unknown }> }
      | undefined;
    names = Object.entries(schema?.properties ?? {})
      .filter(([, property]) => property.type !== 'array')
      .map(([name]) => name);
    singleValued.set(operation, names);
  }
  return names;
}
