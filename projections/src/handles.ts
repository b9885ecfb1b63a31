import { REPRESENTATION } from '@pda/schemas/registry';
import { createCompanyFile } from './company-template.ts';
import { assertCurrentVersion, migrate } from './migrate.ts';
import { openReader, openWriter, type ProjectionDb, readerOpenError } from './open.ts';
import { companyPath, controlPath } from './paths.ts';
import { assertCurrentRepresentation, refreshDocuments } from './stored-documents.ts';

/**
 * Opening a projection file by role: readers (api) get a checked read-only handle, writers (ingest)
 * get a migrated handle. Every function validates the company id before touching the file system.
 */

/** Read-only handle on a company file. Throws ProjectionNotFoundError / ProjectionVersionError. */
export function openCompanyReader(dataDir: string, companyId: string): ProjectionDb {
  const db = checked(openReader(companyPath(dataDir, companyId)), 'company');
  try {
    assertCurrentRepresentation(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Read-only handle on control.sqlite. Throws ProjectionNotFoundError / ProjectionVersionError. */
export function openControlReader(dataDir: string): ProjectionDb {
  return checked(openReader(controlPath(dataDir)), 'control');
}

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

function checked(db: ProjectionDb, kind: 'company' | 'control'): ProjectionDb {
  try {
    assertCurrentVersion(db, kind);
    return db;
  } catch (error) {
    db.close();
    // The first read opens the -wal and -shm files: it may run out of descriptors too.
    throw readerOpenError(db.name, error);
  }
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
