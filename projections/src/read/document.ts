import type { DocumentShape } from '@pda/schemas/registry';

/**
 * Turns a projected row into the contract's JSON by a resource's document shape from the table
 * registry (@pda/schemas/registry): each member is read from a column or is a nested object of
 * the same kind. The renderer is compiled once per shape into one object literal, as fast as a
 * hand-written one (page reads are the api's hot path: bench/README.md, api).
 */

export type Json = Record<string, unknown>;
export type DocumentRenderer = (row: object) => Json;

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** Keyed by the (static) shape object itself: no per-call key building on the hot path. */
const cache = new WeakMap<DocumentShape, DocumentRenderer>();

export function documentRenderer(shape: DocumentShape): DocumentRenderer {
  let render = cache.get(shape);
  if (!render) {
    render = new Function('r', `return ${objectLiteral(shape)};`) as DocumentRenderer;
    cache.set(shape, render);
  }
  return render;
}

/** The columns a shape reads, in member order (nested objects included). */
export function documentColumns(shape: DocumentShape): string[] {
  return Object.values(shape).flatMap((value) =>
    typeof value === 'string' ? [value] : documentColumns(value),
  );
}

function objectLiteral(shape: DocumentShape): string {
  const members = Object.entries(shape).map(([member, value]) => {
    if (typeof value !== 'string') return `${JSON.stringify(member)}: ${objectLiteral(value)}`;
    // Column names are code in the compiled function: only plain identifiers get there.
    if (!IDENTIFIER.test(value)) throw new Error(`not a column name: ${value}`);
    return `${JSON.stringify(member)}: r.${value}`;
  });
  return `{ ${members.join(', ')} }`;
}
