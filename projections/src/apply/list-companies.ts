import { readdirSync } from 'node:fs';
import { companiesDir, isUuid } from '../paths.ts';

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
