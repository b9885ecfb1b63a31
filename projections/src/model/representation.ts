import { type DocumentShape, REPRESENTATION, type TableName, tableDocument } from '@pda/schemas/registry';
import type Database from 'better-sqlite3';

/**
 * The stored representation, shared by both sides. Stored documents: each row of a table with a
 * document (schemas/src/registry.ts) keeps, in its `_json` column, the JSON the api serves for it,
 * rendered when ingest writes the row — so a read joins stored bytes instead of building objects
 * per request. The columns stay the source: analysts read them, sorts and filters use them, and a
 * new representation re-renders from them.
 */

/** A renderer from a row's values in `columns` order to its stored JSON text. */
export type ValuesRenderer = (values: readonly unknown[]) => string;

const renderers = new Map<string, ValuesRenderer>();

/**
 * The table's document renderer over values in `columns` order (undefined: no stored document),
 * compiled once per (table, column list) into one object literal read straight from the values
 * and handed to one JSON.stringify: one native call, cheaper than a string concatenation with a
 * JSON.stringify per value (the render's cost: bench/results/ingest-stored-documents-2026-11-24.md)
 * — the apply thread pays it for every upsert. A test pins the bytes to JSON.stringify of the reference
 * document (projections/src/read/document.ts).
 */
export function valuesRenderer(table: TableName, columns: readonly string[]): ValuesRenderer | undefined {
  const shape = tableDocument(table);
  if (!shape) return undefined;
  const key = `${table}:${columns.join(',')}`;
  let renderer = renderers.get(key);
  if (!renderer) {
    renderer = new Function('v', `return JSON.stringify(${objectOf(shape, columns)});`) as ValuesRenderer;
    renderers.set(key, renderer);
  }
  return renderer;
}

/** The object literal of `shape`: member names quoted as constants, one v[i] per column. */
function objectOf(shape: DocumentShape, columns: readonly string[]): string {
  const members = Object.entries(shape).map(([member, value]) => {
    if (typeof value !== 'string') return `${JSON.stringify(member)}: ${objectOf(value, columns)}`;
    const position = columns.indexOf(value);
    if (position < 0) throw new Error(`document reads ${value}, not one of the columns`);
    return `${JSON.stringify(member)}: v[${position}]`;
  });
  return `{ ${members.join(', ')} }`;
}

/** The representation version stored in a company file (0: never rendered). */
export function fileRepresentation(db: Database.Database): number {
  const version = db.prepare('SELECT representation FROM meta WHERE lock = 1').pluck().get() as
    | number
    | undefined;
  // No meta row yet: a file being created, with no rows to render.
  return version ?? REPRESENTATION.version;
}
