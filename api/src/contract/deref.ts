/**
 * Inlines local `$ref`s (`#/components/...`) of the contract so each route gets self-contained
 * JSON Schemas. The contract has no recursive schemas; a cycle is a contract bug and throws.
 * OpenAPI 3.1 allows siblings next to `$ref` (e.g. a description): they override the target's.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function deref(node: Json, root: Json, trail: readonly string[] = []): Json {
  if (Array.isArray(node)) return node.map((item) => deref(item, root, trail));
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    if (trail.includes(ref)) throw new Error(`contract: recursive $ref ${ref}`);
    const { $ref: _ignored, ...siblings } = node;
    const target = deref(pointer(root, ref), root, [...trail, ref]);
    if (target === null || typeof target !== 'object' || Array.isArray(target)) return target;
    return { ...target, ...(deref(siblings, root, trail) as Record<string, Json>) };
  }
  const result: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) result[key] = deref(value, root, trail);
  return result;
}

function pointer(root: Json, ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`contract: only local $refs are supported, got ${ref}`);
  let current: Json | undefined = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (current === null || typeof current !== 'object' || Array.isArray(current)) current = undefined;
    else current = current[key];
    if (current === undefined) throw new Error(`contract: unresolved $ref ${ref}`);
  }
  return current as Json;
}

export type { Json };
