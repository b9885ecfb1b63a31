import { readdirSync, readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { MigrationInvalidError, ProjectionVersionError } from './errors.ts';

/**
 * Forward-only numbered migrations (migrations/<kind>/NNN-name.sql). The file's schema version is
 * PRAGMA user_version = number of the last applied step. Each step runs in its own transaction
 * together with the user_version bump, so a crash leaves the file at a whole step.
 * A file newer than the code is refused (ProjectionVersionError), never touched.
 */

export type ProjectionKind = 'company' | 'control';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const FILE = /^(\d{3})-[a-z0-9-]+\.sql$/;
const cache = new Map<ProjectionKind, readonly Migration[]>();

/** The migrations of a kind, read once from disk next to this module and checked for gaps. */
export function migrationsFor(kind: ProjectionKind): readonly Migration[] {
  const cached = cache.get(kind);
  if (cached) return cached;
  const dir = new URL(`../migrations/${kind}/`, import.meta.url);
  const steps = readdirSync(dir)
    .filter((name) => FILE.test(name))
    .sort()
    .map((name, index): Migration => {
      const version = Number(name.slice(0, 3));
      if (version !== index + 1) {
        throw new MigrationInvalidError(`${kind} migration ${name}: expected number ${index + 1}`);
      }
      return { version, name, sql: readFileSync(new URL(name, dir), 'utf8') };
    });
  if (steps.length === 0) throw new MigrationInvalidError(`no ${kind} migrations found`);
  cache.set(kind, steps);
  return steps;
}

/** The schema version this code writes and reads for a kind. */
export function latestVersion(kind: ProjectionKind): number {
  return migrationsFor(kind).length;
}

export function fileVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings a writer's file up to the latest version. Returns the versions applied (empty when the
 * file was current). `upTo` exists for tests that build an old-version file.
 */
export function migrate(db: Database.Database, kind: ProjectionKind, upTo = latestVersion(kind)): number[] {
  const known = latestVersion(kind);
  const current = fileVersion(db);
  if (current > known) throw new ProjectionVersionError(db.name, current, known);
  const applied: number[] = [];
  for (const step of migrationsFor(kind)) {
    if (step.version <= current || step.version > upTo) continue;
    db.transaction(() => {
      db.exec(step.sql);
      // PRAGMA takes no bound parameters; version is an integer we produced.
      db.pragma(`user_version = ${step.version}`);
    }).immediate();
    applied.push(step.version);
  }
  return applied;
}

/** For read-only handles: the file must be exactly at the version this code knows. */
export function assertCurrentVersion(db: Database.Database, kind: ProjectionKind): void {
  const known = latestVersion(kind);
  const current = fileVersion(db);
  if (current !== known) throw new ProjectionVersionError(db.name, current, known);
}
