import { existsSync, readdirSync, statSync } from 'node:fs';
import { UsageError, userPath } from '@pda/projections/cli';
import { companiesDir, controlPath, isUuid } from '@pda/projections/model';

/**
 * The data directory the CLI reads: `--data-dir`, else PDA_DATA_DIR (the same directory as ingest's
 * INGEST_DATA_DIR and the api's API_DATA_DIR). Read once by the command, passed down.
 */
export function resolveDataDir(option: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = option ?? env.PDA_DATA_DIR;
  if (given === undefined || given === '') {
    throw new UsageError('no data directory: pass --data-dir DIR or set PDA_DATA_DIR');
  }
  const dir = userPath(given);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new Error(`data directory ${dir} does not exist`);
  if (!existsSync(controlPath(dir)) && !existsSync(companiesDir(dir))) {
    throw new Error(`${dir} is not a projection data directory (no control.sqlite, no companies/)`);
  }
  return dir;
}

/** Ids of the company files present, sorted (names that are not canonical uuids are ignored). */
export function companyFileIds(dataDir: string): string[] {
  const dir = companiesDir(dataDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.sqlite') && isUuid(name.slice(0, -'.sqlite'.length)))
    .map((name) => name.slice(0, -'.sqlite'.length))
    .sort();
}

/** Bytes of a SQLite file and its -wal, 0 for what does not exist. */
export function fileBytes(path: string): { readonly bytes: number; readonly walBytes: number } {
  const size = (file: string): number => (existsSync(file) ? statSync(file).size : 0);
  return { bytes: size(path), walBytes: size(`${path}-wal`) };
}
