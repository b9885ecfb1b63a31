/**
 * Typed errors of the projections library, each with a stable `code` so callers (the api's error
 * handler, ingest's retry/poison split) can map them without matching message text.
 */

export type ProjectionErrorCode =
  | 'invalid_company_id'
  | 'projection_not_found'
  | 'projection_too_new'
  | 'projection_too_old'
  | 'migration_invalid'
  | 'out_of_descriptors'
  | 'projection_unreadable'
  | 'company_file_damaged';

export class ProjectionError extends Error {
  readonly code: ProjectionErrorCode;
  constructor(code: ProjectionErrorCode, message: string) {
    super(message);
    this.name = 'ProjectionError';
    this.code = code;
  }
}

/** A company id that is not a canonical uuid (it would become part of a file path). */
export class InvalidCompanyIdError extends ProjectionError {
  constructor(companyId: unknown) {
    // The value may be hostile input: keep it short in the message.
    super('invalid_company_id', `invalid company id ${JSON.stringify(String(companyId).slice(0, 64))}`);
    this.name = 'InvalidCompanyIdError';
  }
}

/** A reader asked for a projection file that does not exist (not ingested yet, or no such company). */
export class ProjectionNotFoundError extends ProjectionError {
  readonly path: string;
  constructor(path: string) {
    super('projection_not_found', `projection file not found: ${path}`);
    this.name = 'ProjectionNotFoundError';
    this.path = path;
  }
}

/**
 * The file exists but could not be opened because the process has no file descriptor left (its
 * limit, `ulimit -n`, is lower than what its caches and connections need). Retriable: the caller
 * closes some open files and tries again (the api answers 503 if that is not enough).
 */
export class OutOfDescriptorsError extends ProjectionError {
  readonly path: string;
  constructor(path: string) {
    super('out_of_descriptors', `projection file ${path} could not be opened: no file descriptor left`);
    this.name = 'OutOfDescriptorsError';
    this.path = path;
  }
}

/**
 * A reader could not read the file's header or schema (I/O error, not a database, corrupt): the
 * api answers 503 for that company and logs it; `cause` is SQLite's error.
 */
export class ProjectionUnreadableError extends ProjectionError {
  readonly path: string;
  constructor(path: string, cause: unknown) {
    const code = (cause as { code?: unknown } | null)?.code;
    super('projection_unreadable', `projection file ${path} could not be read (${String(code ?? cause)})`);
    this.name = 'ProjectionUnreadableError';
    this.path = path;
    this.cause = cause;
  }
}

/**
 * The file's schema version (PRAGMA user_version) is not the one this code knows: newer means a
 * newer ingest wrote it (never downgrade a file in place); older (readers only) means ingest has not
 * migrated it yet. The api maps both to 503, never to a wrong answer.
 */
export class ProjectionVersionError extends ProjectionError {
  readonly path: string;
  readonly fileVersion: number;
  readonly knownVersion: number;
  constructor(path: string, fileVersion: number, knownVersion: number) {
    const newer = fileVersion > knownVersion;
    super(
      newer ? 'projection_too_new' : 'projection_too_old',
      `projection file ${path} has schema version ${fileVersion}; this code knows version ${knownVersion}`,
    );
    this.name = 'ProjectionVersionError';
    this.path = path;
    this.fileVersion = fileVersion;
    this.knownVersion = knownVersion;
  }
}

/** The migration folder is inconsistent (gap or duplicate in the numbering): a packaging bug. */
export class MigrationInvalidError extends ProjectionError {
  constructor(message: string) {
    super('migration_invalid', message);
    this.name = 'MigrationInvalidError';
  }
}

/**
 * The file's stored documents (meta.representation) are not the ones this code serves: newer means
 * a newer ingest rendered them; older (readers only) means ingest has not re-rendered the file yet.
 * Same codes and api answer (503) as a schema version mismatch.
 */
export class RepresentationVersionError extends ProjectionError {
  readonly path: string;
  readonly fileVersion: number;
  readonly knownVersion: number;
  constructor(path: string, fileVersion: number, knownVersion: number) {
    const newer = fileVersion > knownVersion;
    super(
      newer ? 'projection_too_new' : 'projection_too_old',
      `projection file ${path} has stored documents of representation ${fileVersion}; this code serves representation ${knownVersion}`,
    );
    this.name = 'RepresentationVersionError';
    this.path = path;
    this.fileVersion = fileVersion;
    this.knownVersion = knownVersion;
  }
}

/**
 * A company file is damaged (deleted while its company has data, replaced, corrupt): the writer
 * takes the company out of service (control.sqlite `company_faults`) until a per-company rebuild,
 * and the api answers 503 for it. `reason` names what was found.
 */
export class CompanyFileDamagedError extends ProjectionError {
  readonly companyId: string;
  readonly reason: string;
  constructor(companyId: string, reason: string) {
    super('company_file_damaged', `company file of ${companyId} is damaged: ${reason}`);
    this.name = 'CompanyFileDamagedError';
    this.companyId = companyId;
    this.reason = reason;
  }
}
