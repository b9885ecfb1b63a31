import { truncatedMember } from '@pda/schemas/registry';
import { invalidParameter } from '../errors/api-error.ts';
import type { Json, Resource } from './resource.ts';

/** `include` (≤ 5 relations, only the resource's own) and `fields[<resource>]` (sparse members). */

export const MAX_INCLUDES = 5;

export function parseInclude(value: string | undefined, resource: Resource): ReadonlySet<string> {
  if (value === undefined) return new Set();
  const names = value.split(',');
  if (names.length > MAX_INCLUDES) {
    throw invalidParameter('include', `at most ${MAX_INCLUDES} relations may be included`);
  }
  const allowed = Object.keys(resource.relations);
  for (const name of names) {
    if (!allowed.includes(name)) {
      const hint =
        allowed.length > 0 ? `allowed: ${allowed.join(', ')}` : `${resource.name} has no relations`;
      throw invalidParameter('include', `unknown relation ${JSON.stringify(name.slice(0, 50))}; ${hint}`);
    }
  }
  return new Set(names);
}

/** null = every member. Relation names are accepted; a relation is present only when included. */
export function parseFields(value: string | undefined, resource: Resource): ReadonlySet<string> | null {
  if (value === undefined) return null;
  const parameter = `fields[${resource.name}]`;
  const names = value.split(',');
  for (const name of names) {
    if (!resource.fields.includes(name)) {
      throw invalidParameter(parameter, `unknown field ${JSON.stringify(name.slice(0, 50))}`);
    }
  }
  return new Set(names);
}

/** The content type of the JSON texts the handlers return (sent as they are, not serialised again). */
export const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * The documents' JSON texts with only the members `fields` asks for. Without `fields` the stored
 * texts go out as they are; with it each is parsed, trimmed and serialised again (the slower path:
 * bench/README.md, api).
 */
export function selectedDocuments(
  documents: readonly string[],
  fields: ReadonlySet<string> | null,
  include: ReadonlySet<string>,
): readonly string[] {
  if (fields === null) return documents;
  return documents.map((document) => JSON.stringify(selectMembers(JSON.parse(document), fields, include)));
}

/**
 * Keeps `id`, the listed members and every included relation (fields never drops an include:
 * docs/public-data-api-v1.md, "Collection query parameters"), with its `<member>_truncated`
 * marker when it has one (resources/relation-embedder.ts).
 */
export function selectMembers(
  json: Json,
  fields: ReadonlySet<string> | null,
  include: ReadonlySet<string>,
): Json {
  if (fields === null) return json;
  const selected: Json = {};
  for (const [name, value] of Object.entries(json)) {
    if (name === 'id' || fields.has(name) || include.has(name) || included(name, include)) {
      selected[name] = value;
    }
  }
  return selected;
}

/** Whether `name` is the truncation marker of an included relation (`contacts_truncated`). */
function included(name: string, include: ReadonlySet<string>): boolean {
  for (const member of include) if (truncatedMember(member) === name) return true;
  return false;
}
