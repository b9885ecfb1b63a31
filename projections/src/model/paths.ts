import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidCompanyIdError } from './errors.ts';

/**
 * Where projection files live under a data directory (docs/architecture.md#projection-layout):
 *   <dataDir>/control.sqlite and <dataDir>/companies/<company_id>.sqlite.
 * A company id becomes part of a file name, so only canonical lowercase uuids are accepted:
 * no `..`, slashes or other path tricks can reach the file system.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a canonical lowercase uuid (the form PostgreSQL and Debezium emit). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

export function controlPath(dataDir: string): string {
  return join(dataDir, 'control.sqlite');
}

export function companiesDir(dataDir: string): string {
  return join(dataDir, 'companies');
}

/** Throws InvalidCompanyIdError unless `companyId` is a canonical uuid. */
export function companyPath(dataDir: string, companyId: string): string {
  if (!isUuid(companyId)) throw new InvalidCompanyIdError(companyId);
  return join(companiesDir(dataDir), `${companyId}.sqlite`);
}

/** Company ids that have a projection file (a TRUNCATE of a tenant table reaches all of them). */
export function listCompanyFiles(dataDir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(companiesDir(dataDir));
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return [];
    throw error;
  }
  const ids: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.sqlite')) continue;
    const id = name.slice(0, -'.sqlite'.length);
    if (isUuid(id)) ids.push(id);
  }
  return ids;
}
