import { REPRESENTATION } from '@pda/schemas/registry';
import type Database from 'better-sqlite3';
import { RepresentationVersionError } from '../model/errors.ts';
import { assertCurrentVersion } from '../model/migrate.ts';
import { openReader, type ProjectionDb, readerOpenError } from '../model/open.ts';
import { companyPath, controlPath } from '../model/paths.ts';
import { fileRepresentation } from '../model/representation.ts';

/**
 * Opening a projection file as a reader (api, analysts): a checked read-only handle. Every function
 * validates the company id before touching the file system (write/files/open-writers.ts: the writer).
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

/** For read-only handles: the stored documents must be exactly the ones this code serves. */
export function assertCurrentRepresentation(db: Database.Database): void {
  const current = fileRepresentation(db);
  if (current !== REPRESENTATION.version) {
    throw new RepresentationVersionError(db.name, current, REPRESENTATION.version);
  }
}
