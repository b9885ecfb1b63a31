import { existsSync } from 'node:fs';
import { UsageError, userPath } from '@pda/projections/cli';
import {
  companyPath,
  controlPath,
  InvalidCompanyIdError,
  openReader,
  type ProjectionDb,
} from '@pda/projections/model';
import { resolveDataDir } from './data-dir.ts';

/**
 * What a command reads: one company's file, control.sqlite, or a file given by path (a snapshot or
 * an analysis database). Every one is opened by projections' openReader: `readonly` (SQLite
 * refuses any write to the file) plus `query_only`. A reader never blocks ingest: the files are in
 * WAL mode, so a reader sees the last commit before its read began while the writer goes on.
 */

export type Source =
  | { readonly kind: 'company'; readonly companyId: string }
  | { readonly kind: 'control' }
  | { readonly kind: 'file'; readonly path: string };

export interface SourceOptions {
  readonly 'data-dir'?: string | undefined;
  readonly company?: string | undefined;
  readonly control?: boolean | undefined;
  readonly file?: string | undefined;
}

/** Exactly one of --company, --control, --file. */
export function sourceFrom(values: SourceOptions): Source {
  const given = [values.company !== undefined, values.control === true, values.file !== undefined];
  if (given.filter(Boolean).length !== 1) {
    throw new UsageError('name what to read: exactly one of --company ID, --control or --file PATH');
  }
  if (values.company !== undefined) return { kind: 'company', companyId: values.company };
  if (values.file !== undefined) return { kind: 'file', path: userPath(values.file) };
  return { kind: 'control' };
}

export interface OpenSource {
  readonly db: ProjectionDb;
  readonly path: string;
  /** `company <id>`, `control.sqlite`, or the path. */
  readonly label: string;
}

export function sourcePath(
  source: Source,
  dataDirOption: string | undefined,
  env: NodeJS.ProcessEnv,
): string {
  switch (source.kind) {
    case 'file':
      if (!existsSync(source.path)) throw new Error(`no such file: ${source.path}`);
      return source.path;
    case 'control':
      return controlPath(resolveDataDir(dataDirOption, env));
    case 'company':
      try {
        return companyPath(resolveDataDir(dataDirOption, env), source.companyId);
      } catch (error) {
        if (error instanceof InvalidCompanyIdError) throw new UsageError(`--company: ${error.message}`);
        throw error;
      }
  }
}

export function openSource(
  source: Source,
  dataDirOption: string | undefined,
  env: NodeJS.ProcessEnv,
): OpenSource {
  const path = sourcePath(source, dataDirOption, env);
  const label =
    source.kind === 'company'
      ? `company ${source.companyId}`
      : source.kind === 'control'
        ? 'control.sqlite'
        : path;
  return { db: openReader(path), path, label };
}
