import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DOCUMENT_TABLE_NAMES, REPRESENTATION, type TableName } from '@pda/schemas/registry';
import type Database from 'better-sqlite3';
import { RepresentationVersionError } from '../../model/errors.ts';
import { migrate } from '../../model/migrate.ts';
import { openWriter, type ProjectionDb } from '../../model/open.ts';
import { companyPath, controlPath } from '../../model/paths.ts';
import { quoteIdent } from '../../model/quote-ident.ts';
import { fileRepresentation, valuesRenderer } from '../../model/representation.ts';

/**
 * Opening a projection file as its writer (ingest): created if missing, migrated. Every function
 * validates the company id before touching the file system (read/open-readers.ts: the readers).
 */

/**
 * Writer handle on a company file: created if missing, migrated, its meta row present, its stored
 * documents at the code's representation (re-rendered from the columns if older).
 */
export function openCompanyWriter(dataDir: string, companyId: string): ProjectionDb {
  const path = companyPath(dataDir, companyId);
  createCompanyFile(path);
  const db = migrated(openWriter(path), 'company');
  // Read first: a write on every open would cost a WAL append (and a checkpoint on close) per reopen.
  try {
    if (db.prepare('SELECT 1 FROM meta WHERE lock = 1').get() === undefined) {
      // A new file holds no rows: its (no) documents are current.
      db.prepare('INSERT INTO meta (lock, company_id, representation) VALUES (1, ?, ?)').run(
        companyId,
        REPRESENTATION.version,
      );
    } else {
      refreshDocuments(db);
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Writer handle on control.sqlite: created if missing, migrated. */
/**
 * control.sqlite holds a route per tenant row (millions for a big source) and every batch reads
 * and writes routes at random ids: a 64 MiB page cache (default 2 MiB) keeps the hot part of that
 * B-tree in memory instead of re-reading pages from the OS cache. One writer, so one cache.
 */
const CONTROL_WRITER_CACHE_KIB = 64 * 1024;

export function openControlWriter(dataDir: string): ProjectionDb {
  const db = migrated(openWriter(controlPath(dataDir)), 'control');
  db.pragma(`cache_size = -${CONTROL_WRITER_CACHE_KIB}`);
  return db;
}

function migrated(db: ProjectionDb, kind: 'company' | 'control'): ProjectionDb {
  try {
    migrate(db, kind);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

// ---- new company files ---------------------------------------------------------------------------

/**
 * New company files are copies of an empty, migrated, WAL-mode file built once per process.
 * Creating each file from scratch costs a rollback-journal transaction to switch it to WAL and one
 * transaction per migration step (six fsyncs); a copy costs none, which matters when a snapshot
 * or a rebuild creates thousands of companies.
 */

let template: Buffer | undefined;

/** Built next to the company files (no dependency on a writable /tmp); the name is not a uuid. */
function templateBytes(dir: string): Buffer {
  if (template) return template;
  const path = join(dir, `.template-${process.pid}.sqlite`);
  try {
    const db = openWriter(path);
    migrate(db, 'company');
    db.close(); // checkpoints: everything is in the main file, which stays in WAL mode
    template = readFileSync(path);
  } finally {
    rmSync(path, { force: true });
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
  }
  return template;
}

/** Creates `path` as an empty company file at the code's schema version, atomically (write + rename). */
function createCompanyFile(path: string): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, templateBytes(dirname(path)));
  renameSync(partial, path);
}

// ---- stored documents of an older representation ----------------------------------------------

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
