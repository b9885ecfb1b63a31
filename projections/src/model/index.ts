// `@pda/projections/model`: what both sides share — the change types, file paths, migrations,
// errors and fault kinds, descriptor budgets, and how a row becomes its stored document. Opening a
// file for writing is not here: only `@pda/projections/write` (ingest) writes projections.
export * from './change.ts';
export * from './descriptors.ts';
export * from './errors.ts';
export * from './migrate.ts';
export { openReader, type ProjectionDb, readerOpenError } from './open.ts';
export * from './ownership.ts';
export * from './paths.ts';
export * from './quote-ident.ts';
export * from './redact-url.ts';
export * from './representation.ts';
export * from './statement-lru.ts';
export * from './storage-faults.ts';
export * from './thread-error.ts';
export * from './trace-link.ts';
