import { rmSync } from 'node:fs';
import { companyPath } from '../../model/paths.ts';
import { openControlWriter } from '../files/open-writers.ts';

/**
 * Removes company files from a data directory whose writer no longer applies those companies (a
 * writer split by company whose ownership shrank: ingest's `remove-unowned`). The file, its -wal
 * and -shm go, and so do the company's rows in control.sqlite's `company_files` and
 * `company_faults`: otherwise the writer would take the missing file for a lost one (damaged) if
 * the company came back to it. Run while the writer is stopped (one writer per data directory);
 * the company rows themselves (`companies`) stay: every writer keeps every company.
 */
export function removeCompanyFiles(dataDir: string, companyIds: readonly string[]): void {
  const db = openControlWriter(dataDir);
  try {
    const forget = db.transaction((ids: readonly string[]) => {
      for (const id of ids) {
        db.prepare('DELETE FROM company_files WHERE company_id = ?').run(id);
        db.prepare('DELETE FROM company_faults WHERE company_id = ?').run(id);
      }
    });
    forget(companyIds);
  } finally {
    db.close();
  }
  for (const id of companyIds) {
    const path = companyPath(dataDir, id);
    for (const suffix of ['-wal', '-shm', '']) rmSync(`${path}${suffix}`, { force: true });
  }
}
