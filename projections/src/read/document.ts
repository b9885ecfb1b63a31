import type { DocumentShape } from '@pda/schemas/registry';

/**
 * Turns a projected row into the contract's JSON object by a resource's document shape from the
 * table registry (@pda/schemas/registry): each member is read from a column or is a nested object
 * of the same kind. This is the reference form of a document: ingest stores the same bytes through
 * the compiled string renderer of projections/src/model/representation.ts (a test pins them equal),
 * and tests and tools that hold a row build its document here. Compiled once per shape into one
 * object literal.
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
