import {
  DOCUMENT_TABLE_NAMES,
  type DocumentShape,
  REPRESENTATION,
  type TableName,
  tableDocument,
} from '@pda/schemas/registry';
import type Database from 'better-sqlite3';
import { RepresentationVersionError } from './errors.ts';
import { quoteIdent } from './quote-ident.ts';

/**
 * Stored documents: each row of a table with a document (schemas/src/registry.ts) keeps, in its
 * `_json` column, the JSON the api serves for it, rendered when ingest writes the row — so a read
 * joins stored bytes instead of building objects per request. The columns stay the source:
 * analysts read them, sorts and filters use them, and a new representation re-renders from them.
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

/** For read-only handles: the stored documents must be exactly the ones this code serves. */
export function assertCurrentRepresentation(db: Database.Database): void {
  const current = fileRepresentation(db);
  if (current !== REPRESENTATION.version) {
    throw new RepresentationVersionError(db.name, current, REPRESENTATION.version);
  }
}

/**
 * Writer side, when a file is opened: re-renders every stored document of an older representation
 * from the columns, a chunk of rows per transaction (a file with millions of rows must not grow
 * its WAL by its own size), then bumps the version in a last transaction. Until that bump the
 * file still says the old version, so no reader serves the half-rendered file (the api refuses
 * it), and a crash means the next open renders again. A newer representation is refused, never
 * rewritten. Returns the number of rows rendered.
 */
export function refreshDocuments(db: Database.Database): number {
  const current = fileRepresentation(db);
  if (current === REPRESENTATION.version) return 0;
  if (current > REPRESENTATION.version) {
    throw new RepresentationVersionError(db.name, current, REPRESENTATION.version);
  }
  let rendered = 0;
  for (const table of DOCUMENT_TABLE_NAMES) rendered += renderTable(db, table);
  db.prepare('UPDATE meta SET representation = ? WHERE lock = 1').run(REPRESENTATION.version);
  return rendered;
}

/** Rows per transaction while re-rendering: bounded memory and WAL on a file with millions of rows. */
const RENDER_CHUNK = 2_000;

function renderTable(db: Database.Database, table: TableName): number {
  const columns = columnsOf(db, table);
  const render = valuesRenderer(table, columns)!;
  const t = quoteIdent(table);
  const select = db
    .prepare(
      `SELECT rowid, ${columns.map(quoteIdent).join(', ')} FROM ${t} WHERE rowid > ? ORDER BY rowid LIMIT ${RENDER_CHUNK}`,
    )
    .raw();
  const update = db.prepare(`UPDATE ${t} SET "_json" = ? WHERE rowid = ?`);
  const renderChunk = db.transaction((after: number): unknown[][] => {
    // Read whole before it is written: SQLite must not update rows a statement still iterates.
    const rows = select.all(after) as unknown[][];
    for (const [rowid, ...values] of rows) update.run(render(values), rowid);
    return rows;
  });
  let count = 0;
  let after = 0;
  for (;;) {
    const rows = renderChunk.immediate(after);
    count += rows.length;
    if (rows.length < RENDER_CHUNK) return count;
    after = rows[rows.length - 1]![0] as number;
  }
}

/** The table's data columns as the file has them (bookkeeping columns excluded). */
function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${quoteIdent(table)})`).all() as { name: string }[])
    .map((column) => column.name)
    .filter((name) => !name.startsWith('_'));
}
