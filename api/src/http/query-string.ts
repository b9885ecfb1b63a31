/**
 * The query-string parser handed to Fastify. Like the default it decodes names and values (so
 * `fields%5Bsites%5D` and `fields[sites]` are the same parameter) and turns repeats into arrays,
 * but a pair that is not valid UTF-8 percent-encoding is not passed on as raw text: its name is
 * recorded under MALFORMED_PARAMETERS and the request is answered 400 before any handler runs.
 */

export const MALFORMED_PARAMETERS: unique symbol = Symbol('malformed query parameters');

export type ParsedQuery = Record<string, string | string[]> & { [MALFORMED_PARAMETERS]?: string[] };

/** Every query this parser made: what a hook before validation reads (isParsedQuery). */
const parsed = new WeakSet<object>();

/** `request.query` as this parser made it (before validation: every value a string or a repeat's list). */
export function isParsedQuery(query: unknown): query is ParsedQuery {
  return typeof query === 'object' && query !== null && parsed.has(query);
}

export function parseQueryString(input: string): ParsedQuery {
  // No prototype: a parameter named __proto__ or constructor is just an (unknown) parameter.
  const result = Object.create(null) as ParsedQuery;
  parsed.add(result);
  if (input.length === 0) return result;
  for (const pair of input.split('&')) {
    if (pair.length === 0) continue;
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const rawValue = equals === -1 ? '' : pair.slice(equals + 1);
    const name = decodeQueryComponent(rawName);
    const value = decodeQueryComponent(rawValue);
    if (name === undefined || value === undefined) {
      const malformed = result[MALFORMED_PARAMETERS] ?? [];
      malformed.push(name ?? rawName.slice(0, 100));
      result[MALFORMED_PARAMETERS] = malformed;
      continue;
    }
    if (name.length === 0) continue;
    const existing = result[name];
    if (existing === undefined) result[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else result[name] = [existing, value];
  }
  return result;
}

/**
 * One name or value as this parser reads it (`+` is a space, then percent-decoding); undefined
 * when it is not valid UTF-8 percent-encoding. Also what the log redaction compares names by
 * (opaque-values.ts): a name is redacted as the parameter it is read as.
 */
export function decodeQueryComponent(text: string): string | undefined {
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}
